import type { StructuredLogger } from '@podmin/agent-util-logging';
import type { LeaseStore } from '../election/election.ports';
import { Elector } from '../election/elector';
import type { ElectorOptions } from '../election/elector-options';
import { systemElectionTimer, systemMonotonicClock, systemWallClock } from './system-clocks';

/** An elector on the system's monotonic clock, wall clock and timer, as the agent runs it. */
export function systemElector(
  store: LeaseStore,
  log: StructuredLogger,
  options: ElectorOptions,
): Elector {
  return new Elector(
    {
      store,
      monotonic: systemMonotonicClock,
      wall: systemWallClock,
      timer: systemElectionTimer,
      log,
    },
    options,
  );
}
