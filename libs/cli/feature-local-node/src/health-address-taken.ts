import path from 'node:path';
import { PodminError } from '@podmin/util-errors';
import type { HealthAnswer } from './agent-health';

/**
 * The error when something other than the agent setup started answers on its health address:
 * names what holds it and how to stop that. `listeners` are the pids /proc shows listening on
 * the port ({@link listeningPids}; empty when it could not tell): a pid an agent reports is
 * named only when it is among them.
 */
export function healthAddressTaken(
  answer: Exclude<HealthAnswer, { kind: 'none' }> | { kind: 'silent' },
  healthAddress: string,
  self: { cluster: string; nodegroup: string; dataDir: string },
  listeners: readonly number[] = [],
): PodminError {
  const port = healthAddress.slice(healthAddress.lastIndexOf(':') + 1);
  const doing = `starting podmin-agent for ${self.cluster}/${self.nodegroup}: ${healthAddress} is held by`;
  const elsewhere =
    'or run this cluster on other addresses (PODMIN_LOCAL_HEALTH_ADDRESS, PODMIN_LOCAL_REGISTRY_LISTEN, PODMIN_LOCAL_DNS_LISTEN, PODMIN_LOCAL_COORDINATION_PORT)';
  const find = `find it with \`ss -ltnp 'sport = :${port}'\` (or \`lsof -i :${port}\`)`;
  const fail = (what: string, hint: string) =>
    new PodminError('ALREADY_EXISTS', `${doing} ${what}; this cluster's agent is not running`, {
      hint,
      fault: 'user',
    });
  switch (answer.kind) {
    case 'agent': {
      const a = answer.agent;
      // A node root is <data dir>/nodes/<cluster>/<nodegroup>: it tells whose configuration set it up.
      const dataDir = path.resolve(a.nodeRoot, '..', '..', '..');
      const teardown =
        path.resolve(dataDir) === path.resolve(self.dataDir)
          ? `\`podmin use ${a.cluster} && podmin teardown\``
          : `\`podmin teardown\` in cluster ${a.cluster}'s context (the Podmin configuration whose data directory is ${dataDir})`;
      const about = `cluster ${a.cluster}, nodegroup ${a.nodegroup}, node root ${a.nodeRoot}`;
      // Anything can answer /readyz with a pid: name one only when it holds the socket.
      if (listeners.includes(a.pid))
        return fail(
          `another podmin-agent (${about}, pid ${a.pid}, version ${a.version})`,
          `Stop that agent with ${teardown} or \`kill ${a.pid}\`, ${elsewhere}.`,
        );
      if (listeners.length > 0) {
        const one = listeners.length === 1;
        return fail(
          `${one ? 'pid' : 'pids'} ${listeners.join(', ')}, which ${one ? 'answers' : 'answer'} as another podmin-agent (${about}, version ${a.version}) but ${one ? 'is' : 'are'} not the pid that agent reports`,
          `Stop that agent with ${teardown} or \`kill ${listeners.join(' ')}\`, ${elsewhere}.`,
        );
      }
      return fail(
        `another podmin-agent (${about}, version ${a.version})`,
        `Stop that agent with ${teardown}, or kill the process listening on :${port} (setup could not tell which process listens there; find it with \`ss -ltnp 'sport = :${port}'\`, as root for another user's process), ${elsewhere}.`,
      );
    }
    case 'unnamed-agent':
      return fail(
        'a podmin-agent that does not say which cluster it serves (an older version)',
        `Stop it with \`podmin teardown\` in its cluster's context, or ${find} and kill that pid, ${elsewhere}.`,
      );
    case 'other':
      return fail(
        `something that is not a podmin-agent (${answer.detail})`,
        `Stop it (${find}), ${elsewhere}.`,
      );
    case 'silent':
      return fail(
        'something that is not a podmin-agent (it does not answer HTTP)',
        `Stop it (${find}), ${elsewhere}.`,
      );
  }
}
