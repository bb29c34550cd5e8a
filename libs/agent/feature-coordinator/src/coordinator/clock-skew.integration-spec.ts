// One coordinator on a local-directory bucket whose process clock runs 60 s behind the kernel's
// (as under libfaketime): the real elector renews `dns/leader.json`, the store samples the
// written file's mtime, and the coordinator's health carries the skew as a note, once.
import { LocalDirectoryObjectStore } from '@podmin/data-access-object-store';
import { makeTempDir, waitFor, type TempDir } from '@podmin/testing';
import { RecordingLog } from '../__fixtures__/recording-log';
import { systemMonotonicClock } from '../adapters/system-clocks';
import type { CoordinationTransport, ReadinessSource } from '../coordinator.ports';
import { EndpointTable } from '../coordination/endpoint-table';
import { Coordinator } from './coordinator';
import { systemElector } from '../adapters/system-elector';

const TIMING = { leaseMs: 1500, pollMs: 250, renewMarginMs: 500 };

/** Readiness with no Pods that never fails. */
const noPods: ReadinessSource = {
  current: () => [],
  onChange: () => () => undefined,
  health: () => ({ ok: true, state: 'watching', detail: 'test' }),
  run: (signal) => new Promise((r) => signal.addEventListener('abort', () => r(), { once: true })),
};

/** A transport that serves nothing and reaches no one (a single node needs neither). */
const alone: CoordinationTransport = {
  serve: () => Promise.resolve({ address: '[fd00::1]:8081', close: () => Promise.resolve() }),
  hello: () => Promise.reject(new Error('no peers')),
  close: () => undefined,
};

describe('Coordinator clock-skew note', () => {
  let tmp: TempDir;
  let coordinator: Coordinator | undefined;

  beforeEach(async () => {
    tmp = await makeTempDir('coordinator-skew-');
  });

  afterEach(async () => {
    await coordinator?.stop();
    await tmp.cleanup();
  });

  it('notes a clock 60 s behind the bucket in its health detail, stays healthy, logs it once', async () => {
    const store = new LocalDirectoryObjectStore(tmp.path, { now: () => Date.now() - 60_000 });
    const log = new RecordingLog();
    const reports: Array<{ healthy: boolean; detail: string | undefined }> = [];
    const elector = systemElector(store, log, {
      id: 'node-1',
      addr: '[fd00::1]:8081',
      timing: TIMING,
    });
    coordinator = new Coordinator(
      {
        store,
        elector,
        readiness: noPods,
        endpoints: new EndpointTable(
          { monotonic: systemMonotonicClock, log },
          { leaseMs: TIMING.leaseMs, allowUniqueLocal: true },
        ),
        transport: alone,
        monotonic: systemMonotonicClock,
        log,
        health: (healthy, detail) => reports.push({ healthy, detail }),
        serverTime: store,
      },
      {
        cluster: 'demo',
        nodeId: 'node-1',
        nodegroup: 'web',
        prefix: 'fd00:0:0:1::/80',
        helloIntervalMs: 100,
        snapshotIntervalMs: 200,
        coalesceMs: 20,
      },
    );
    await coordinator.start();
    const noted = await waitFor(
      () => reports.find((r) => r.detail?.includes('clock skew')),
      'the clock-skew note in the health detail',
      10_000,
    );
    expect(noted).toEqual({
      healthy: true,
      detail:
        "clock skew: this node's clock is 60 s behind the object store's (over 30 s); check its time synchronisation",
    });
    // Several more renewals and health rounds: still one warning, and the node still leads.
    const samples = new Set([store.lastServerTime()]);
    await waitFor(
      () => (samples.add(store.lastServerTime()).size > 3 ? true : undefined),
      'three more renewals of dns/leader.json',
      10_000,
      20,
    );
    expect(elector.isLeader()).toBe(true);
    expect(log.lines.filter((l) => l.msg === 'clock skew')).toHaveLength(1);
    expect(reports.filter((r) => r.detail?.includes('clock skew'))).toHaveLength(1);
  });
});
