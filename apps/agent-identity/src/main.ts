// agent-identity: workload CA trust and rotation, workload identity generations, node mTLS leaves.
//   agent-identity --provider --bucket --region --cluster --nodegroup --ipv6-prefix (the agent's flags)
import 'reflect-metadata';
import { runIdentity } from '@podmin/agent-feature-identity';

void runIdentity(process.argv.slice(2));

// Under podmin-agent the IPC channel closes when the supervisor dies (even by SIGKILL): exit
// with it rather than linger as an orphan holding sockets and ports.
process.on('disconnect', () => process.exit(0));
