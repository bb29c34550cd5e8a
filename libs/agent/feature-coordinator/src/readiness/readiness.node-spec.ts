import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { KubeletPodsClient, type KubeletPod } from '@podmin/agent-data-access-kubelet-pods';
import { formatIpv6, parseIpv6 } from '@podmin/util-names';
import type { LocalReadyPod } from '../coordinator.ports';
import { systemElectionTimer, systemMonotonicClock } from '../adapters/system-clocks';
import { KubeletReadiness } from './kubelet-readiness';

// Run by tools/node-tier.sh against a real kubelet 1.36 after `podmin setup`:
//   PODMIN_NODE_TIER_PODS_SOCKET  kubelet's pods-api.sock
//   PODMIN_NODE_TIER_MANIFESTS    kubelet's static-Pod directory
//   PODMIN_NODE_TIER_IMAGE        the node tier's hello image (its `cat` mode is the probe)
// The static Pod is written as .json, which kubelet reads and the static-Pod reconciler (which
// owns every *.yaml there) leaves alone. Its exec readiness probe reads a file on a hostPath
// volume, so the test flips readiness from the host.
function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} must be set (this suite is run by tools/node-tier.sh)`);
  return value;
}
const socket = required('PODMIN_NODE_TIER_PODS_SOCKET');
const manifests = required('PODMIN_NODE_TIER_MANIFESTS');
const image = required('PODMIN_NODE_TIER_IMAGE');

const LABEL = 'podmin-node-tier';
const VALUE = 'readiness';
const manifest = path.join(manifests, 'podmin-node-tier-readiness.json');

/** Polls `probe` every 100 ms until it returns a value, at most `limitMs`. */
async function waitFor<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  limitMs: number,
): Promise<T> {
  const end = Date.now() + limitMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out after ${limitMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const ours = (p: LocalReadyPod): boolean => p.labels[LABEL] === VALUE;
const isOurs = (p: KubeletPod): boolean => p.labels[LABEL] === VALUE;

describe('KubeletReadiness against a real kubelet', () => {
  const flagDir = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-readiness-flag-'));
  const flag = path.join(flagDir, 'ready');
  const client = new KubeletPodsClient(socket);
  const abort = new AbortController();
  const readiness = new KubeletReadiness(
    { monotonic: systemMonotonicClock, timer: systemElectionTimer },
    // A short resync so that the periodic list() also runs against kubelet during the test.
    { socketPath: socket, timing: { coalesceMs: 100, resyncMs: 5_000 } },
  );
  /** Every set a notification delivered, with when (ms since the epoch). */
  const notified: { at: number; ours: LocalReadyPod[] }[] = [];
  readiness.onChange(() =>
    notified.push({ at: Date.now(), ours: readiness.current().filter(ours) }),
  );
  let running: Promise<void> | undefined;
  let flippedAt = 0;

  beforeAll(() => {
    // The container runs as 65534: the flag directory must be searchable and the flag readable.
    fs.chmodSync(flagDir, 0o755);
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'readiness-flip',
        namespace: 'default',
        labels: { [LABEL]: VALUE, app: 'flip' },
      },
      spec: {
        containers: [
          {
            name: 'hello',
            image,
            env: [{ name: 'PORT', value: '8081' }],
            readinessProbe: {
              exec: { command: ['/hello', 'cat', '/flag/ready'] },
              periodSeconds: 1,
              failureThreshold: 1,
              successThreshold: 1,
              timeoutSeconds: 1,
            },
            volumeMounts: [{ name: 'flag', mountPath: '/flag', readOnly: true }],
          },
        ],
        volumes: [{ name: 'flag', hostPath: { path: flagDir, type: 'Directory' } }],
      },
    };
    fs.writeFileSync(`${manifest}.tmp`, JSON.stringify(pod, null, 2));
    // kubelet ignores dot-files only, so the rename is what publishes the Pod.
    fs.renameSync(`${manifest}.tmp`, manifest);
    running = readiness.run(abort.signal);
  });

  afterAll(async () => {
    fs.rmSync(manifest, { force: true });
    abort.abort();
    await running;
    client.close();
    fs.rmSync(flagDir, { recursive: true, force: true });
  });

  it('watches kubelet and keeps a Running Pod whose probe fails out of the set', async () => {
    await waitFor(
      'the watch',
      () => (readiness.health().state === 'watching' ? true : undefined),
      30_000,
    );
    expect(readiness.health().ok).toBe(true);
    const running = await waitFor(
      'the Pod Running with an address',
      async () =>
        (await client.list()).find(
          (p) =>
            isOurs(p) && p.containers.some((c) => c.state === 'running') && p.podIPs.length > 0,
        ),
      150_000,
    );
    expect(running.ready).toBe(false);
    // Several probe periods with the container running and the probe failing.
    await new Promise((r) => setTimeout(r, 4_000));
    const later = (await client.list()).find(isOurs);
    expect(later?.ready).toBe(false);
    expect(later?.containers[0]?.state).toBe('running');
    expect(readiness.current().filter(ours)).toEqual([]);
    expect(notified.some((n) => n.ours.length > 0)).toBe(false);
  }, 180_000);

  it('enters the set once kubelet reports it Ready, with its canonical IPv6 and labels', async () => {
    fs.writeFileSync(flag, 'ready\n', { mode: 0o644 });
    flippedAt = Date.now();
    const entered = await waitFor(
      'the Pod in the Ready set',
      () => readiness.current().find(ours),
      30_000,
    );
    const pod = (await client.list()).find(isOurs);
    expect(pod?.ready).toBe(true);
    const ipv6 = pod?.podIPs.map((ip) => parseIpv6(ip)).find((g) => g !== undefined);
    expect(ipv6).toBeDefined();
    expect(entered).toEqual({
      namespace: 'default',
      pod: pod?.name,
      labels: { [LABEL]: VALUE, app: 'flip' },
      address: formatIpv6(ipv6 ?? []),
    });
    expect(entered.pod).toMatch(/^readiness-flip-/);
    // Ready in the set no earlier than kubelet said so (its transition has 1 s resolution).
    expect(pod?.readyTransition?.getTime()).toBeGreaterThanOrEqual(
      Math.floor(flippedAt / 1000) * 1000,
    );
    await waitFor(
      'a notification with the Pod',
      () => (notified.some((n) => n.ours.length === 1) ? true : undefined),
      5_000,
    );
    process.stderr.write(
      `readiness node tier: probe passing → in the set after ${Date.now() - flippedAt} ms\n`,
    );
  }, 60_000);

  it('leaves the set when its probe fails, and again when the Pod is deleted', async () => {
    fs.rmSync(flag);
    const failedAt = Date.now();
    await waitFor(
      'the Pod out of the Ready set',
      () => (readiness.current().some(ours) ? undefined : true),
      30_000,
    );
    const leftMs = Date.now() - failedAt;
    const pod = (await client.list()).find(isOurs);
    expect(pod?.ready).toBe(false);
    expect(pod?.containers[0]?.state).toBe('running'); // still running: only readiness changed
    await waitFor(
      'a notification without the Pod',
      () => (notified.at(-1)?.ours.length === 0 ? true : undefined),
      5_000,
    );
    process.stderr.write(
      `readiness node tier: probe failing → out of the set after ${leftMs} ms\n`,
    );

    fs.writeFileSync(flag, 'ready\n', { mode: 0o644 });
    await waitFor('the Pod Ready again', () => readiness.current().find(ours), 30_000);
    fs.rmSync(manifest);
    await waitFor(
      'the deleted Pod out of the set',
      () => (readiness.current().some(ours) ? undefined : true),
      90_000,
    );
    await waitFor(
      'kubelet without the Pod',
      async () => ((await client.list()).some(isOurs) ? undefined : true),
      90_000,
    );
    expect(readiness.health()).toMatchObject({ ok: true, state: 'watching' });
  }, 240_000);
});
