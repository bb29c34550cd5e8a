import { serviceVip } from '@podmin/util-desired-state';
import type { SnapshotService } from '../snapshot/snapshot-codec';
import { Wakeup } from './coordinator';
import { ServicesViewHub, ViewSource, snapshotOf, withoutBackends } from './services-view';

const service = (backends: string[]): SnapshotService => ({
  namespace: 'default',
  name: 'web',
  vip: serviceVip('demo', 'default', 'web'),
  ports: [{ port: 80, targetPort: 80, protocol: 'TCP' as SnapshotService['ports'][0]['protocol'] }],
  backends: backends.map((address) => ({ address, nodeId: 'n1' })),
});

describe('ServicesViewHub', () => {
  it('answers a caller holding nothing at once, and a current caller only on a change', async () => {
    const hub = new ServicesViewHub();
    const first = await hub.watch('', 1000);
    expect(first?.source).toBe(ViewSource.NONE);
    const known = first!.snapshot.revision;
    expect(await hub.watch(known, 0)).toBeUndefined();
    const waiting = hub.watch(known, 5000);
    const next = snapshotOf([service(['fd00::1'])], 3);
    expect(hub.publish(next, ViewSource.LEADER)).toBe(true);
    await expect(waiting).resolves.toMatchObject({ source: ViewSource.LEADER, snapshot: next });
  });

  it('times out unchanged, and a change of source alone does not answer a waiter', async () => {
    const hub = new ServicesViewHub();
    const snap = snapshotOf([service([])], 1);
    hub.publish(snap, ViewSource.RESTORED);
    const waiting = hub.watch(snap.revision, 100);
    hub.publish(snap, ViewSource.LEADER);
    await expect(waiting).resolves.toBeUndefined();
  });

  it('drops backends but keeps identities and ports', () => {
    const full = snapshotOf([service(['fd00::1', 'fd00::2'])], 7);
    const bare = withoutBackends(full);
    expect(bare.generation).toBe(7);
    expect(bare.services[0]).toMatchObject({
      name: 'web',
      vip: full.services[0]!.vip,
      backends: [],
    });
    expect(bare.services[0]!.ports).toEqual(full.services[0]!.ports);
    expect(bare.revision).not.toBe(full.revision);
  });
});

describe('Wakeup', () => {
  it('shortens a wait to the coalescing window after a kick, and remembers a kick made while busy', async () => {
    const wakeup = new Wakeup(10);
    const signal = new AbortController().signal;
    wakeup.kick(); // while busy: the next wait is short
    const t0 = performance.now();
    await wakeup.wait(5000, signal);
    const waiting = wakeup.wait(5000, signal);
    wakeup.kick();
    wakeup.kick();
    await waiting;
    expect(performance.now() - t0).toBeLessThan(4000);
  });

  it('ends a wait when its signal aborts', async () => {
    const controller = new AbortController();
    const waiting = new Wakeup(10).wait(60_000, controller.signal);
    controller.abort();
    await expect(waiting).resolves.toBeUndefined();
  });
});
