// agent-dataplane: the eBPF TCX Service VIP dataplane, maps programmed from the local
// agent-coordinator's WatchServices, detached when no Service exists.
//   agent-dataplane --provider --bucket --region --cluster --nodegroup --ipv6-prefix (the agent's flags)
import 'reflect-metadata';
import { runAgentProcess } from '@podmin/agent-data-access-runtime';
import { dataplaneProcess } from '@podmin/agent-feature-dataplane';

void runAgentProcess(dataplaneProcess);
