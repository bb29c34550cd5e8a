// agent-staticpod: turns committed desired state into kubelet static Pods on this node.
//   agent-staticpod --provider --bucket --region --cluster --nodegroup --ipv6-prefix (the agent's flags)
import 'reflect-metadata';
import { runStaticPod } from '@podmin/agent-feature-staticpod';

void runStaticPod(process.argv.slice(2));

// Under podmin-agent the IPC channel closes when the supervisor dies (even by SIGKILL): exit
// with it rather than linger as an orphan holding sockets and ports.
process.on('disconnect', () => process.exit(0));
