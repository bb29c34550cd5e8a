import { HOUR_MS, createClusterCa, issueNodeLeaf, type ClusterCa } from '@podmin/util-pki';
import { RecordingLog } from '../__fixtures__/recording-log';
import type { NodeLeaf, NodeLeafSource } from '../coordinator.ports';
import { CoordinationServerCredentials, type RenewalTimer } from './credentials';

const START = new Date('2026-12-01T10:00:00Z');

/** A hand-driven timer: the test fires the pending callback and reads its delay. */
class FakeTimer implements RenewalTimer {
  pending: { callback: () => void; ms: number } | undefined;
  set(callback: () => void, ms: number): unknown {
    this.pending = { callback, ms };
    return this.pending;
  }
  clear(handle: unknown): void {
    if (this.pending === handle) this.pending = undefined;
  }
  fire(): void {
    const p = this.pending;
    this.pending = undefined;
    p?.callback();
  }
}

/** A leaf source that issues a new 24 h leaf on each call once `renewable` is set. */
class SteppedSource implements NodeLeafSource {
  calls = 0;
  renewable = false;
  failing = false;
  private current: NodeLeaf | undefined;
  constructor(
    private readonly ca: ClusterCa,
    private readonly now: () => Date,
  ) {}
  async leaf(): Promise<NodeLeaf> {
    this.calls++;
    if (this.failing) throw new Error('identity unavailable');
    if (this.current && !this.renewable) return this.current;
    this.renewable = false;
    const issued = await issueNodeLeaf(
      this.ca,
      { cluster: 'prod', nodegroup: 'workers', nodeId: 'n1', ipv6: '2600::1' },
      this.now(),
    );
    this.current = {
      certificatePem: issued.certificatePem,
      privateKeyPem: issued.privateKeyPem,
      caPem: this.ca.certificate.pem,
      notAfter: issued.certificate.notAfter,
    };
    return this.current;
  }
}

describe('CoordinationServerCredentials', () => {
  let ca: ClusterCa;
  beforeAll(async () => {
    ca = await createClusterCa('prod', START);
  });

  /** Credentials on a {@link SteppedSource}, a fake timer and a log, at the clock `rig.now`. */
  async function renewalRig(options: { retryMs?: number } = {}) {
    const timer = new FakeTimer();
    const log = new RecordingLog();
    const rig = { now: START };
    const source = new SteppedSource(ca, () => rig.now);
    const creds = await CoordinationServerCredentials.create(source, {
      timer,
      clock: { now: () => rig.now },
      log,
      ...options,
    });
    return Object.assign(rig, { timer, log, source, creds });
  }

  it('is TLS 1.3 only and requires a verified client certificate', async () => {
    const creds = await CoordinationServerCredentials.create(new SteppedSource(ca, () => START), {
      timer: new FakeTimer(),
      clock: { now: () => START },
    });
    expect(creds._isSecure()).toBe(true);
    expect(creds._getConstructorOptions()).toMatchObject({
      minVersion: 'TLSv1.3',
      maxVersion: 'TLSv1.3',
      requestCert: true,
      rejectUnauthorized: true,
    });
    expect(creds._getSecureContextOptions()).toMatchObject({
      minVersion: 'TLSv1.3',
      ca: ca.certificate.pem,
      cert: creds.current().certificatePem,
    });
  });

  it('renews at 2/3 of the lifetime and pushes the new leaf to watching servers', async () => {
    const rig = await renewalRig();
    const { timer, source, log, creds } = rig;
    expect(timer.pending?.ms).toBe(16 * HOUR_MS);
    const pushed: unknown[] = [];
    creds._addWatcher((options) => pushed.push(options?.cert));
    const first = creds.current().certificatePem;

    rig.now = new Date(START.getTime() + 16 * HOUR_MS);
    source.renewable = true;
    timer.fire();
    await expect(creds.renewNow()).resolves.toBe(true); // joins the renewal the timer started
    expect(creds.current().certificatePem).not.toBe(first);
    expect(pushed).toEqual([creds.current().certificatePem]);
    expect(log.messages()).toContain('renew coordination leaf');
    expect(timer.pending?.ms).toBe(16 * HOUR_MS);
  });

  it('retries sooner when the source has no new leaf yet or fails, and stops when closed', async () => {
    const rig = await renewalRig({ retryMs: 30_000 });
    const { timer, source, log, creds } = rig;
    rig.now = new Date(START.getTime() + 16 * HOUR_MS);
    timer.fire(); // the source still holds the same leaf
    await expect(creds.renewNow()).resolves.toBe(false);
    expect(timer.pending?.ms).toBe(30_000);
    source.failing = true;
    rig.now = new Date(START.getTime() + 24 * HOUR_MS - 40_000);
    timer.fire();
    await creds.renewNow();
    expect(log.lines.find((l) => l.msg === 'renew coordination leaf failed')?.fields).toMatchObject(
      {
        error: 'identity unavailable',
      },
    );
    expect(timer.pending?.ms).toBe(10_000); // a quarter of what is left
    creds.close();
    expect(timer.pending).toBeUndefined();
    expect(await creds.renewNow()).toBe(false);
    expect(timer.pending).toBeUndefined();
  });
});
