// agent-identity: workload CA trust and rotation, workload identity generations, node mTLS leaves.
//   agent-identity --provider --bucket --region --cluster --nodegroup --ipv6-prefix (the agent's flags)
import 'reflect-metadata';
import { runAgentProcess } from '@podmin/agent-data-access-runtime';
import { identityProcess } from '@podmin/agent-feature-identity';

void runAgentProcess(identityProcess);
