import { InMemoryObjectStore } from '@podmin/testing';
import { WorkloadCaKey } from '@podmin/util-pki';
import { FakeClock } from './__fixtures__/fakes';
import { CA_STATE_KEY } from './ca-state';
import { WorkloadCaRotator } from './workload-ca.rotator';
import { WorkloadCaTrust } from './workload-ca.trust';

const T0 = new Date('2030-01-01T00:00:00Z');
const key = WorkloadCaKey.fromSeed(Buffer.alloc(32, 12));

describe('WorkloadCaTrust', () => {
  it('reports a CA the leader has not created yet', async () => {
    const trust = new WorkloadCaTrust(new InMemoryObjectStore(), key, new FakeClock(T0), 'prod');
    await expect(trust.load()).rejects.toMatchObject({ code: 'OBJECT_NOT_FOUND' });
  });

  it('rereads only when the ETag changed', async () => {
    const store = new InMemoryObjectStore();
    const clock = new FakeClock(T0);
    await new WorkloadCaRotator(store, key, clock, { cluster: 'prod' }).reconcile();
    const trust = new WorkloadCaTrust(store, key, clock, 'prod');
    const first = await trust.load();
    store.calls.length = 0;
    const second = await trust.load();
    expect(store.calls).toEqual([`getIfChanged ${CA_STATE_KEY}`]);
    expect(second.etag).toBe(first.etag);
    expect(second.issuer.key).toBe(key);
  });

  it('refuses to issue with an expired active certificate', async () => {
    const store = new InMemoryObjectStore();
    const clock = new FakeClock(T0);
    await new WorkloadCaRotator(store, key, clock, { cluster: 'prod' }).reconcile();
    const trust = new WorkloadCaTrust(store, key, clock, 'prod');
    clock.set(new Date('2031-01-02T00:00:00Z'));
    await expect(trust.load()).rejects.toMatchObject({ code: 'PRECONDITION_FAILED' });
  });

  it('rejects a CA state for another cluster', async () => {
    const store = new InMemoryObjectStore();
    const clock = new FakeClock(T0);
    await new WorkloadCaRotator(store, key, clock, { cluster: 'staging' }).reconcile();
    await expect(new WorkloadCaTrust(store, key, clock, 'prod').load()).rejects.toThrow(
      /cluster prod/,
    );
  });
});
