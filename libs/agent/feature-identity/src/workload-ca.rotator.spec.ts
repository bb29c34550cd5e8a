import { InMemoryObjectStore } from '@podmin/testing';
import {
  DAY_MS,
  MINUTE_MS,
  WorkloadCaKey,
  createWorkloadCaCertificate,
  hasPkiReason,
} from '@podmin/util-pki';
import { FakeClock, FakeExternalBundle } from './__fixtures__/fakes';
import { decideCaRotation } from './ca-rotation';
import type { CaState } from './ca-state';
import { CA_STATE_KEY, parseCaState, serializeCaState } from './ca-state';
import { WorkloadCaRotator } from './workload-ca.rotator';
import { WorkloadCaTrust } from './workload-ca.trust';

const T0 = new Date('2030-01-01T00:00:00Z');
const key = WorkloadCaKey.fromSeed(Buffer.alloc(32, 11));
const plus = (d: Date, ms: number): Date => new Date(d.getTime() + ms);

interface Rig {
  store: InMemoryObjectStore;
  clock: FakeClock;
  external: FakeExternalBundle;
  events: string[];
  rotator: WorkloadCaRotator;
  state: () => CaState;
  byState: (s: 'active' | 'pending' | 'retired') => CaState['certificates'][number] | undefined;
}

function rig(withExternal = true): Rig {
  const store = new InMemoryObjectStore();
  const clock = new FakeClock(T0);
  const events: string[] = [];
  const external = new FakeExternalBundle(events);
  store.beforeConditionalWrite = (k) => events.push(`write ${k}`);
  const rotator = new WorkloadCaRotator(
    store,
    key,
    clock,
    { cluster: 'prod' },
    withExternal ? external : undefined,
  );
  const state = (): CaState => parseCaState(store.objects.get(CA_STATE_KEY)!.body);
  return {
    store,
    clock,
    external,
    events,
    rotator,
    state,
    byState: (s) => state().certificates.find((c) => c.state === s),
  };
}

const certCount = (bundle: string | undefined): number =>
  bundle?.match(/BEGIN CERTIFICATE/g)?.length ?? 0;

describe('workload CA rotation through a full year and beyond', () => {
  it('creates, rotates with propagation, retires, drops, and rotates again next year', async () => {
    const r = rig();
    // Year 1: create.
    let report = await r.rotator.reconcile();
    expect(report.steps).toEqual(['create']);
    const first = r.byState('active')!;
    expect(Date.parse(first.notAfter) - T0.getTime()).toBe(365 * DAY_MS);
    expect(r.external.content?.body).toBe(report.state.bundlePem);
    expect(report.nextCheckAt).toEqual(new Date(Date.parse(first.notAfter) - 30 * DAY_MS));

    // Quiet months: nothing is written.
    for (const day of [1, 100, 334]) {
      r.clock.set(plus(T0, day * DAY_MS));
      expect((await r.rotator.reconcile()).steps).toEqual([]);
    }
    expect(r.state().certificates).toHaveLength(1);

    // Thirty days before expiry: pending published, external first observed, then the delay starts.
    const rotateAt = new Date(Date.parse(first.notAfter) - 30 * DAY_MS);
    r.clock.set(rotateAt);
    r.events.length = 0;
    report = await r.rotator.reconcile();
    expect(report.steps).toEqual(['add-pending', 'start-propagation']);
    expect(r.events).toEqual([
      `write ${CA_STATE_KEY}`,
      'external 2 certs',
      `write ${CA_STATE_KEY}`,
    ]);
    expect(r.byState('active')!.pem).toBe(first.pem);
    const pending = r.byState('pending')!;
    expect(pending.activateAfter).toBe(plus(rotateAt, 10 * MINUTE_MS).toISOString());
    expect(certCount(r.external.content?.body)).toBe(2);
    expect(report.nextCheckAt).toEqual(plus(rotateAt, 10 * MINUTE_MS));

    // Agents trust both certificates but still issue with the old one during propagation.
    const trust = new WorkloadCaTrust(r.store, key, r.clock, 'prod');
    let trusted = await trust.load();
    expect(trusted.certificates).toHaveLength(2);
    expect(trusted.issuer.certificate.pem).toBe(first.pem);

    // Not before ten minutes.
    r.clock.set(plus(rotateAt, 10 * MINUTE_MS - 1000));
    expect((await r.rotator.reconcile()).steps).toEqual([]);
    expect(r.byState('pending')).toBeDefined();

    // After ten minutes: promote; the old certificate is retained as retired for 30 days.
    const promoteAt = plus(rotateAt, 10 * MINUTE_MS);
    r.clock.set(promoteAt);
    const writesBefore = r.external.writes;
    report = await r.rotator.reconcile();
    expect(report.steps).toEqual(['promote']);
    expect(r.byState('active')!.pem).toBe(pending.pem);
    expect(r.byState('retired')).toEqual({
      pem: first.pem,
      state: 'retired',
      notAfter: first.notAfter,
      retireAfter: plus(promoteAt, 30 * DAY_MS).toISOString(),
    });
    expect(r.external.writes).toBe(writesBefore); // promotion leaves the bundle bytes unchanged
    trusted = await trust.load();
    expect(trusted.issuer.certificate.pem).toBe(pending.pem);

    // The old certificate expires before its retention ends; that is not a recovery.
    r.clock.set(new Date(first.notAfter));
    expect((await r.rotator.reconcile()).steps).toEqual([]);

    // Thirty days after promotion: the retired certificate is dropped and the bundle shrinks.
    r.clock.set(plus(promoteAt, 30 * DAY_MS));
    report = await r.rotator.reconcile();
    expect(report.steps).toEqual(['drop-retired']);
    expect(r.state().certificates.map((c) => c.state)).toEqual(['active']);
    expect(certCount(r.external.content?.body)).toBe(1);

    // Year 2: the same cycle for the second certificate.
    const second = r.byState('active')!;
    const rotate2 = new Date(Date.parse(second.notAfter) - 30 * DAY_MS);
    r.clock.set(plus(rotate2, -1000));
    expect((await r.rotator.reconcile()).steps).toEqual([]);
    r.clock.set(rotate2);
    expect((await r.rotator.reconcile()).steps).toEqual(['add-pending', 'start-propagation']);
    r.clock.set(plus(rotate2, 10 * MINUTE_MS));
    expect((await r.rotator.reconcile()).steps).toEqual(['promote']);
    r.clock.set(plus(rotate2, 10 * MINUTE_MS + 30 * DAY_MS));
    expect((await r.rotator.reconcile()).steps).toEqual(['drop-retired']);
    const third = r.byState('active')!;
    expect(new Set([first.pem, second.pem, third.pem]).size).toBe(3);
    expect(Date.parse(third.notAfter)).toBeGreaterThan(Date.parse(second.notAfter));
  });

  it('rotates without an external destination, starting the delay at once', async () => {
    const r = rig(false);
    await r.rotator.reconcile();
    const active = r.byState('active')!;
    const rotateAt = new Date(Date.parse(active.notAfter) - 30 * DAY_MS);
    r.clock.set(rotateAt);
    expect((await r.rotator.reconcile()).steps).toEqual(['add-pending', 'start-propagation']);
    r.clock.set(plus(rotateAt, 10 * MINUTE_MS));
    expect((await r.rotator.reconcile()).steps).toEqual(['promote']);
    expect(r.external.writes).toBe(0);
  });

  it('recovers from a missed window: publishes the replacement externally, then activates it at once', async () => {
    const r = rig();
    await r.rotator.reconcile();
    const old = r.byState('active')!;
    // The leader was down through the whole rotation window.
    const late = plus(new Date(old.notAfter), 3 * DAY_MS);
    r.clock.set(late);
    r.events.length = 0;
    const report = await r.rotator.reconcile();
    expect(report.steps).toEqual(['recover']);
    expect(r.events).toEqual(['external 1 certs', `write ${CA_STATE_KEY}`]);
    const replacement = r.state().certificates;
    expect(replacement).toHaveLength(1);
    expect(replacement[0]!.state).toBe('active');
    expect(replacement[0]!.pem).not.toBe(old.pem);
    expect(Date.parse(replacement[0]!.notAfter)).toBe(late.getTime() + 365 * DAY_MS);
    expect(r.external.content?.body).toBe(report.state.bundlePem);
    // Agents issue again.
    const trusted = await new WorkloadCaTrust(r.store, key, r.clock, 'prod').load();
    expect(trusted.issuer.certificate.pem).toBe(replacement[0]!.pem);
  });

  it('recovers by promoting a still-valid pending certificate that never finished propagating', async () => {
    const r = rig();
    await r.rotator.reconcile();
    const old = r.byState('active')!;
    r.external.stale = true; // the destination never shows the new bundle
    r.clock.set(new Date(Date.parse(old.notAfter) - 30 * DAY_MS));
    expect((await r.rotator.reconcile()).steps).toEqual(['add-pending']);
    const pending = r.byState('pending')!;
    r.external.stale = false;
    r.clock.set(plus(new Date(old.notAfter), 1000));
    expect((await r.rotator.reconcile()).steps).toEqual(['recover']);
    expect(r.state().certificates).toEqual([
      { pem: pending.pem, state: 'active', notAfter: pending.notAfter },
    ]);
  });

  it('refuses to recover while the external replacement cannot be observed', async () => {
    const r = rig();
    await r.rotator.reconcile();
    const old = r.byState('active')!;
    r.external.stale = true;
    r.clock.set(plus(new Date(old.notAfter), 1000));
    await expect(r.rotator.reconcile()).rejects.toMatchObject({ code: 'PRECONDITION_FAILED' });
    expect(r.byState('active')!.pem).toBe(old.pem);
  });

  it('starts the propagation delay only once the exact external bundle is observed', async () => {
    const r = rig();
    await r.rotator.reconcile();
    const rotateAt = new Date(Date.parse(r.byState('active')!.notAfter) - 30 * DAY_MS);
    r.clock.set(rotateAt);
    r.external.stale = true;
    const report = await r.rotator.reconcile();
    expect(report.steps).toEqual(['add-pending']);
    expect(r.byState('pending')!.activateAfter).toBeUndefined();
    expect(report.nextCheckAt).toEqual(plus(rotateAt, 30_000));
    // Much later, still unobserved: no promotion however long it waits.
    r.clock.set(plus(rotateAt, DAY_MS));
    expect((await r.rotator.reconcile()).steps).toEqual([]);
    expect(r.byState('pending')!.activateAfter).toBeUndefined();
    // Observed now: the ten minutes start from here.
    r.external.stale = false;
    const seenAt = plus(rotateAt, 2 * DAY_MS);
    r.clock.set(seenAt);
    expect((await r.rotator.reconcile()).steps).toEqual(['start-propagation']);
    expect(r.byState('pending')!.activateAfter).toBe(plus(seenAt, 10 * MINUTE_MS).toISOString());
  });

  it('rechecks the external bundle before promotion and restarts the delay when it changed', async () => {
    const r = rig();
    await r.rotator.reconcile();
    const rotateAt = new Date(Date.parse(r.byState('active')!.notAfter) - 30 * DAY_MS);
    r.clock.set(rotateAt);
    await r.rotator.reconcile();
    r.external.tamper('something else\n');
    const recheckAt = plus(rotateAt, 10 * MINUTE_MS);
    r.clock.set(recheckAt);
    const report = await r.rotator.reconcile();
    expect(report.steps).toEqual(['restart-propagation', 'start-propagation']);
    expect(r.byState('pending')!.activateAfter).toBe(plus(recheckAt, 10 * MINUTE_MS).toISOString());
    expect(r.external.content?.body).toBe(report.state.bundlePem);
    r.clock.set(plus(recheckAt, 10 * MINUTE_MS));
    expect((await r.rotator.reconcile()).steps).toEqual(['promote']);
  });

  it('loses a compare-and-swap race to another leader and adopts its state', async () => {
    const r = rig(false);
    const other = await createWorkloadCaCertificate(key, 'prod', T0);
    const theirs: CaState = {
      version: 1,
      certificates: [{ pem: other.pem, state: 'active', notAfter: other.notAfter.toISOString() }],
    };
    let raced = false;
    r.store.beforeConditionalWrite = (k) => {
      if (!raced && k === CA_STATE_KEY) {
        raced = true;
        r.store.store(CA_STATE_KEY, serializeCaState(theirs));
      }
    };
    const report = await r.rotator.reconcile();
    expect(report.steps).toEqual(['conflict']);
    expect(r.byState('active')!.pem).toBe(other.pem);
  });

  it('never overwrites a CA state signed by another key', async () => {
    const r = rig();
    const foreign = await createWorkloadCaCertificate(
      WorkloadCaKey.fromSeed(Buffer.alloc(32, 99)),
      'prod',
      T0,
    );
    const body = serializeCaState({
      version: 1,
      certificates: [
        { pem: foreign.pem, state: 'active', notAfter: foreign.notAfter.toISOString() },
      ],
    });
    r.store.store(CA_STATE_KEY, body);
    let caught: unknown;
    await r.rotator.reconcile().catch((err: unknown) => (caught = err));
    expect(hasPkiReason(caught, 'CA_KEY_MISMATCH')).toBe(true);
    expect(r.store.objects.get(CA_STATE_KEY)!.body.toString()).toBe(body);
    await expect(new WorkloadCaTrust(r.store, key, r.clock, 'prod').load()).rejects.toThrow(
      /not the stored workload CA key/,
    );
  });
});

describe('decideCaRotation', () => {
  it('waits until the earliest deadline', () => {
    const state: CaState = {
      version: 1,
      certificates: [
        { pem: 'a', state: 'active', notAfter: '2031-01-01T00:00:00.000Z' },
        {
          pem: 'b',
          state: 'retired',
          notAfter: '2030-01-01T00:00:00.000Z',
          retireAfter: '2030-02-01T00:00:00.000Z',
        },
      ],
    };
    expect(decideCaRotation(state, T0)).toEqual({
      kind: 'wait',
      until: new Date('2030-02-01T00:00:00.000Z'),
    });
    expect(decideCaRotation(undefined, T0)).toEqual({ kind: 'create' });
    expect(decideCaRotation(state, new Date('2031-01-01T00:00:00.000Z'))).toEqual({
      kind: 'recover',
      replacement: 'new',
    });
  });
});
