// agent-staticpod: turns committed desired state into kubelet static Pods on this node.
//   agent-staticpod --provider --bucket --region --cluster --nodegroup --ipv6-prefix (the agent's flags)
import 'reflect-metadata';
import { runAgentProcess } from '@podmin/agent-data-access-runtime';
import { staticPodProcess } from '@podmin/agent-feature-staticpod';

void runAgentProcess(staticPodProcess);
