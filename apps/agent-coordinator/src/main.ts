// agent-coordinator: leader election, mTLS coordination, kubelet readiness, fenced Service
// snapshots and their fan-out to agent-dns and agent-dataplane.
//   agent-coordinator --provider --bucket --region --cluster --nodegroup --ipv6-prefix (the agent's flags)
import 'reflect-metadata';
import { runAgentProcess } from '@podmin/agent-data-access-runtime';
import { coordinatorProcess } from '@podmin/agent-feature-coordinator';

void runAgentProcess(coordinatorProcess);
