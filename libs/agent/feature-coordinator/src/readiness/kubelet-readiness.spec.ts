import { createServer, type Server as NetServer } from 'node:net';
import path from 'node:path';
import type { StructuredLogger } from '@podmin/agent-util-logging';
import { makeTempDir } from '@podmin/testing';
import { FakeKubelet, type FakePod } from '../__fixtures__/fake-kubelet';
import { FakeTime } from '../__fixtures__/fake-time';
import { KubeletReadiness } from './kubelet-readiness';
import { readyPods } from './ready-pods';
import type { ReadinessTiming } from './readiness-options';

// The watch runs against a real gRPC Pods API server on a temporary Unix socket; only time is
// fake, so every timer (coalescing, backoff, resync, hold) fires when the test says.

/** Waits (real time, bounded) for network I/O to have an effect. */
async function eventually(what: string, done: () => boolean, limitMs = 5_000): Promise<void> {
  const end = Date.now() + limitMs;
  while (!done()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const web = (n: number, ready = true, ips = [`fd00:1::${n}`]): FakePod => ({
  uid: `u${n}`,
  name: `web-${n}`,
  labels: { app: 'web', n: String(n) },
  ready,
  ips,
});

interface Line {
  msg: string;
  at: number;
  fields: Record<string, unknown>;
}

describe('KubeletReadiness against a gRPC Pods API server on a Unix socket', () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let socket: string;
  let kubelet: FakeKubelet;
  let time: FakeTime;
  let lines: Line[];
  let readiness: KubeletReadiness;
  let notified: number;
  let abort: AbortController;
  let running: Promise<void> | undefined;

  const start = (timing: Partial<ReadinessTiming> = {}): void => {
    const proc = time.process('coordinator');
    const log: StructuredLogger = {
      event: (_level, msg, fields = {}) => lines.push({ msg, at: time.nowMs, fields }),
    };
    readiness = new KubeletReadiness(
      { monotonic: proc.monotonic, timer: proc.timer, log },
      { socketPath: socket, timing },
    );
    readiness.onChange(() => notified++);
    running = readiness.run(abort.signal);
  };
  const addresses = (): string[] => readiness.current().map((p) => p.address);
  const count = (msg: string): number => lines.filter((l) => l.msg === msg).length;
  const watching = (): boolean => readiness.health().state === 'watching';

  beforeEach(async () => {
    dir = await makeTempDir('readiness-');
    socket = path.join(dir.path, 'pods-api.sock');
    kubelet = new FakeKubelet(socket);
    time = new FakeTime();
    lines = [];
    notified = 0;
    abort = new AbortController();
    running = undefined;
  });

  afterEach(async () => {
    abort.abort();
    // run() must return once aborted; a hang fails the test through jest's timeout.
    await running;
    await kubelet.stop();
    await dir.cleanup();
  });

  it('reports Ready Pods with an IPv6 address, canonical and sorted; others stay out', async () => {
    kubelet.set(web(10, true, ['10.0.0.10', 'FD00:1:0:0::000A']));
    kubelet.set(web(2));
    kubelet.set(web(3, false));
    kubelet.set(web(4, true, ['10.0.0.4']));
    kubelet.set(web(5, true, []));
    await kubelet.start();
    start();
    await eventually('the initial sync', watching);
    expect(readiness.current()).toEqual([
      { namespace: 'default', pod: 'web-2', labels: { app: 'web', n: '2' }, address: 'fd00:1::2' },
      {
        namespace: 'default',
        pod: 'web-10',
        labels: { app: 'web', n: '10' },
        address: 'fd00:1::a',
      },
    ]);
    expect(readiness.health()).toEqual({
      ok: true,
      state: 'watching',
      detail: `watching the kubelet Pods API at ${socket}: 2 Ready of 5 Pods`,
    });

    kubelet.set(web(3, true));
    await eventually('web-3 Ready', () => addresses().includes('fd00:1::3'));
    kubelet.set(web(10, false, ['fd00:1::a']));
    await eventually('web-10 not Ready', () => !addresses().includes('fd00:1::a'));
    kubelet.delete('u2');
    await eventually('web-2 deleted', () => !addresses().includes('fd00:1::2'));
    expect(addresses()).toEqual(['fd00:1::3']);
    kubelet.set(web(3, true, ['10.0.0.3']));
    await eventually('web-3 without IPv6', () => readiness.current().length === 0);
  });

  it('coalesces a burst into one notification, and notifies only when the set changed', async () => {
    kubelet.set(web(1));
    kubelet.set(web(2));
    await kubelet.start();
    start({ coalesceMs: 150 });
    await eventually('the initial sync', watching);
    await time.advance(150);
    expect(notified).toBe(1);

    // Forty updates: web-1 flaps, web-3 arrives Ready, web-2 ends not Ready.
    for (let i = 0; i < 20; i++) {
      kubelet.set(web(1, i % 2 === 1));
      kubelet.set(web(2, i % 2 === 0));
    }
    kubelet.set(web(3));
    await eventually('the burst', () => addresses().join() === 'fd00:1::1,fd00:1::3');
    await time.advance(149);
    expect(notified).toBe(1);
    await time.advance(1);
    expect(notified).toBe(2);
    await time.advance(1_000);
    expect(notified).toBe(2);

    // A burst that ends where it started (plus a Pod that is not Ready) changes nothing.
    kubelet.set(web(1, false));
    kubelet.set(web(1, true));
    kubelet.set(web(9, false));
    await eventually('the second burst', () =>
      readiness.health().detail.endsWith('2 Ready of 4 Pods'),
    );
    await time.advance(1_000);
    expect(notified).toBe(2);
  });

  it('reconnects after the stream ends, and the new connection replaces the set', async () => {
    kubelet.set(web(1));
    kubelet.set(web(2));
    await kubelet.start();
    start({ backoffInitialMs: 500 });
    await eventually('the initial sync', watching);
    kubelet.delete('u1', { silent: true });
    kubelet.set(web(3), { silent: true });
    kubelet.endWatches();
    await eventually('the lost stream', () => readiness.health().state === 'reconnecting');
    expect(readiness.health()).toMatchObject({ ok: false, state: 'reconnecting' });
    expect(readiness.health().detail).toContain('the stream ended');
    expect(addresses()).toEqual(['fd00:1::1', 'fd00:1::2']); // kept while reconnecting

    await time.advance(499);
    await pause(50);
    expect(kubelet.watchCalls).toBe(1);
    await time.advance(1);
    await eventually('the reconnect', watching);
    expect(kubelet.watchCalls).toBe(2);
    expect(addresses()).toEqual(['fd00:1::2', 'fd00:1::3']);
    expect(count('lost kubelet Pods watch')).toBe(1);
  });

  it('backs off between failed connections, doubling up to the bound', async () => {
    // Something listens on the socket but drops every connection: each gRPC call fails.
    const listener: NetServer = createServer((c) => c.destroy());
    await new Promise<void>((r) => listener.listen(socket, r));
    try {
      start({ backoffInitialMs: 100, backoffMaxMs: 400 });
      await eventually('the first failed attempt', () => count('lost kubelet Pods watch') === 1);
      for (const gap of [100, 200, 400, 400]) {
        const before = count('lost kubelet Pods watch');
        await time.advance(gap - 1);
        await pause(50);
        expect(count('lost kubelet Pods watch')).toBe(before);
        await time.advance(1);
        await eventually(
          `the attempt after ${gap} ms`,
          () => count('lost kubelet Pods watch') > before,
        );
      }
      expect(readiness.health()).toMatchObject({ ok: false, state: 'reconnecting' });
      expect(readiness.current()).toEqual([]);
    } finally {
      await new Promise((r) => listener.close(r));
    }
  });

  it('covers a missed event with the periodic full resync', async () => {
    kubelet.set(web(1));
    await kubelet.start();
    start({ resyncMs: 60_000 });
    await eventually('the initial sync', watching);
    await time.advance(150);
    expect(notified).toBe(1);
    kubelet.delete('u1', { silent: true });
    kubelet.set(web(2), { silent: true });
    await time.advance(59_000);
    await pause(50);
    expect(kubelet.listCalls).toBe(0);
    expect(addresses()).toEqual(['fd00:1::1']);
    await time.advance(1_000);
    await eventually('the resync', () => addresses().join() === 'fd00:1::2');
    expect(kubelet.listCalls).toBe(1);
    await time.advance(150);
    expect(notified).toBe(2);
    expect(kubelet.watchCalls).toBe(1); // the stream stayed up

    // Resyncs go on while the watch keeps working.
    kubelet.set(web(3), { silent: true });
    await time.advance(60_000);
    await eventually('the second resync', () => addresses().length === 2);
    expect(kubelet.listCalls).toBe(2);
  });

  it('keeps what events said during a slow resync over the older list answer', async () => {
    kubelet.set(web(1));
    kubelet.set(web(2, false));
    await kubelet.start();
    start({ resyncMs: 60_000 });
    await eventually('the initial sync', watching);
    kubelet.set(web(3), { silent: true }); // missed: only the list can tell
    let open = (): void => undefined;
    kubelet.listGate = new Promise((r) => (open = r));
    await time.advance(60_000);
    await eventually('the resync list call', () => kubelet.listCalls === 1);
    // After kubelet took its list, web-2 turns Ready and web-1 goes: the list is older.
    kubelet.set(web(2));
    kubelet.delete('u1');
    await eventually('the events', () => addresses().join() === 'fd00:1::2');
    open();
    await eventually('the merged resync', () => addresses().length === 2);
    expect(addresses()).toEqual(['fd00:1::2', 'fd00:1::3']);
  });

  it('reconnects when a resync fails', async () => {
    kubelet.set(web(1));
    await kubelet.start();
    start({ resyncMs: 60_000, backoffInitialMs: 500 });
    await eventually('the initial sync', watching);
    kubelet.failLists = true;
    await time.advance(60_000);
    await eventually('the failed resync', () => readiness.health().state === 'reconnecting');
    expect(readiness.health().detail).toMatch(/resync failed: .*kubelet is busy/);
    expect(addresses()).toEqual(['fd00:1::1']);
    kubelet.failLists = false;
    await time.advance(500);
    await eventually('the reconnect', watching);
    expect(kubelet.watchCalls).toBe(2);
  });

  it('keeps the last set for the hold once kubelet is gone, then clears it', async () => {
    kubelet.set(web(1));
    await kubelet.start();
    start({ holdMs: 35_000, socketPollMs: 2_000 });
    await eventually('the initial sync', watching);
    await time.advance(150);
    expect(notified).toBe(1);

    await kubelet.stop();
    await eventually('the lost stream', () => readiness.health().state === 'reconnecting');
    await time.advance(500); // the first backoff, then the socket is found missing
    await eventually('no kubelet', () => readiness.health().state === 'no-kubelet');
    const lostAt = lines.find((l) => l.msg === 'lost kubelet Pods watch')?.at ?? NaN;
    expect(readiness.health()).toMatchObject({ ok: false, state: 'no-kubelet' });
    expect(readiness.health().detail).toMatch(
      new RegExp(`^no kubelet Pods API at ${socket} \\(it was there\\); keeping 1 Ready Pods`),
    );
    expect(addresses()).toEqual(['fd00:1::1']);
    await time.advance(lostAt + 35_000 - 1 - time.nowMs);
    expect(addresses()).toEqual(['fd00:1::1']);
    await time.advance(1);
    expect(addresses()).toEqual([]);
    await time.advance(150);
    expect(notified).toBe(2);
    expect(readiness.health().detail).toBe(
      `no kubelet Pods API at ${socket} (it was there); no Ready Pods kept`,
    );

    // kubelet comes back: watching again with its current Pods.
    await kubelet.start();
    await time.advance(2_000);
    await eventually('the new kubelet', watching);
    expect(addresses()).toEqual(['fd00:1::1']);
    expect(readiness.health().ok).toBe(true);
  });

  it('a reconnect within the hold keeps the set without any notification', async () => {
    kubelet.set(web(1));
    await kubelet.start();
    start({ holdMs: 35_000, backoffInitialMs: 500 });
    await eventually('the initial sync', watching);
    await time.advance(150);
    kubelet.endWatches();
    await eventually('the lost stream', () => readiness.health().state === 'reconnecting');
    await time.advance(500);
    await eventually('the reconnect', watching);
    await time.advance(40_000);
    expect(addresses()).toEqual(['fd00:1::1']);
    expect(notified).toBe(1);
    expect(count('clear Ready Pods')).toBe(0);
  });

  it('without a socket reports no endpoints and why, and watches once kubelet appears', async () => {
    start({ socketPollMs: 2_000 });
    await eventually('the socket check', () => readiness.health().state === 'no-kubelet');
    expect(readiness.health()).toEqual({
      ok: true,
      state: 'no-kubelet',
      detail: `no kubelet Pods API at ${socket}`,
    });
    expect(readiness.current()).toEqual([]);
    await time.advance(10_000);
    expect(notified).toBe(0);
    expect(count('no kubelet Pods API')).toBe(1); // said once, not every poll

    kubelet.set(web(7));
    await kubelet.start();
    await time.advance(2_000);
    await eventually('kubelet appearing', watching);
    expect(addresses()).toEqual(['fd00:1::7']);
    await time.advance(150);
    expect(notified).toBe(1);
  });

  it('returns from run when aborted, and refuses a second concurrent run', async () => {
    await kubelet.start();
    start();
    await eventually('the initial sync', watching);
    await expect(readiness.run(abort.signal)).rejects.toThrow(/already running/);
    abort.abort();
    await running;
    await eventually('the watch cancelled at the server', () => kubelet.watching() === 0);
  });

  it('unsubscribes listeners and survives one that throws', async () => {
    kubelet.set(web(1));
    await kubelet.start();
    start();
    let other = 0;
    const off = readiness.onChange(() => other++);
    readiness.onChange(() => {
      throw new Error('boom');
    });
    await eventually('the initial sync', watching);
    await time.advance(150);
    expect([notified, other]).toEqual([1, 1]);
    off();
    kubelet.delete('u1');
    await eventually('the deletion', () => addresses().length === 0);
    await time.advance(150);
    expect([notified, other]).toEqual([2, 1]);
    expect(count('readiness listener failed')).toBe(2);
  });
});

describe('readyPods', () => {
  it('picks the first IPv6 podIP in RFC 5952 form and orders by its text, as snapshots do', () => {
    const pod = (name: string, ips: string[], ready = true) => ({
      uid: name,
      name,
      namespace: 'ns',
      labels: {},
      annotations: {},
      phase: 'Running',
      ready,
      podIPs: ips,
      containers: [],
    });
    expect(
      readyPods([
        pod('b', ['2001:DB8:0:0:1:0:0:1']),
        pod('a', ['192.0.2.1', '2001:db8::2', '2001:db8::3']),
        pod('c', ['2001:db8::1'], false),
        pod('d', ['fe80::1%eth0']),
      ]).map((p) => [p.pod, p.address]),
    ).toEqual([
      ['b', '2001:db8::1:0:0:1'],
      ['a', '2001:db8::2'],
    ]);
  });
});
