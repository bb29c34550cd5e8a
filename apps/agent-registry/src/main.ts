// agent-registry: the node's loopback, pull-only OCI registry, served from the cluster bucket.
//   agent-registry --provider --bucket --region --cluster --nodegroup --ipv6-prefix (the agent's flags)
import 'reflect-metadata';
import { runAgentProcess } from '@podmin/agent-data-access-runtime';
import { registryProcess } from '@podmin/agent-feature-registry';

void runAgentProcess(registryProcess);
