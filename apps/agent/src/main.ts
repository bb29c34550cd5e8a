// podmin-agent: validates its six flags, then supervises the node's service processes.
import { runAgent } from '@podmin/agent-feature-supervisor';

declare const __PODMIN_VERSION__: string | undefined;

void runAgent(
  process.argv.slice(2),
  {
    healthAddress: process.env['PODMIN_AGENT_HEALTH_ADDRESS'],
    registryListen: process.env['PODMIN_AGENT_REGISTRY_LISTEN'],
    nodeRoot: process.env['PODMIN_NODE_ROOT'],
  },
  typeof __PODMIN_VERSION__ === 'string' ? __PODMIN_VERSION__ : '0.0.0-dev',
).then((code) => {
  process.exitCode = code;
});
