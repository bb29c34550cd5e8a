// agent-dns: authoritative Service DNS for svc.cluster.local on PODMIN_AGENT_DNS_LISTEN
// (127.0.0.1:1053, UDP and TCP), zones from the local agent-coordinator's WatchServices.
//   agent-dns --provider --bucket --region --cluster --nodegroup --ipv6-prefix (the agent's flags)
import 'reflect-metadata';
import { runAgentProcess } from '@podmin/agent-data-access-runtime';
import { dnsProcess } from '@podmin/agent-feature-dns';

void runAgentProcess(dnsProcess);
