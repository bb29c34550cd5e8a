import { serviceVip } from '@podmin/util-desired-state';
import type { SnapshotService } from '../snapshot/snapshot-codec';
import { Wakeup } from './wakeup';
import { ServicesViewHub, ViewSource, snapshotOf, withoutBackends } from './services-view';

const service = (backends: string[]): SnapshotService => ({
  namespace: 'default',
  name: 'web',
  vip: serviceVip('demo', 'default', 'web'),
  ports: [{ port: 80, targetPort: 80, protocol: 'TCP' as SnapshotService['ports'][0]['protocol'] }],
  backends: backends.map((address) => ({ address, nodeId: 'n1' })),
});

describe('ServicesViewHub', () => {
  it('answers a caller only when the view differs from what it holds', async () => {
    const hub = new ServicesViewHub();
    expect(hub.current().source).toBe(ViewSource.NONE);
    // Nothing known yet has the empty revision: a caller holding nothing waits for a snapshot.
    expect(await hub.watch('', 0)).toBeUndefined();
    const waiting = hub.watch('', 5000);
    const next = snapshotOf([service(['fd00::1'])], 3);
    expect(hub.publish(next, ViewSource.LEADER)).toBe(true);
    await expect(waiting).resolves.toMatchObject({ source: ViewSource.LEADER, snapshot: next });
    expect(await hub.watch(next.revision, 0)).toBeUndefined();
    expect(await hub.watch('stale', 0)).toMatchObject({ snapshot: next });
  });

  it('answers an identities watcher holding nothing with the first snapshot, even an empty one', async () => {
    const hub = new ServicesViewHub();
    const waiting = hub.watch('', 5000, { identitiesOnly: true });
    hub.publish(snapshotOf([], 1), ViewSource.LEADER);
    const view = await waiting;
    expect(view?.source).toBe(ViewSource.LEADER);
    expect(view?.snapshot.services).toEqual([]);
    expect(view?.snapshot.revision).not.toBe('');
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
