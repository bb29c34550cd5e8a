// agent-registry: the node's loopback, pull-only OCI registry, served from the cluster bucket.
//   agent-registry --provider local|aws --bucket B --region R --cluster C [--listen 127.0.0.1:5000]
import 'reflect-metadata';
import { runRegistry } from '@podmin/agent-feature-registry';

void runRegistry(process.argv.slice(2)).then(() => {
  // Tell the supervising podmin-agent (IPC channel) that the registry is listening.
  if (process.exitCode === undefined) process.send?.({ type: 'ready' });
});

// Under podmin-agent the IPC channel closes when the supervisor dies (even by SIGKILL): exit
// with it rather than linger as an orphan holding sockets and ports.
process.on('disconnect', () => process.exit(0));
