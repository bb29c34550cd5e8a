// podmin-agent: validates its six flags, then supervises the node's service processes.
import { runAgent } from '@podmin/agent-feature-supervisor';

declare const __PODMIN_VERSION__: string | undefined;

void runAgent(
  process.argv.slice(2),
  {},
  typeof __PODMIN_VERSION__ === 'string' ? __PODMIN_VERSION__ : '0.0.0-dev',
).then((code) => {
  process.exitCode = code;
});
