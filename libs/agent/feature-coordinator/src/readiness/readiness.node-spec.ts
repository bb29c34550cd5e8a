import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { KubeletPodsClient, type KubeletPod } from '@podmin/agent-data-access-kubelet-pods';
import { LocalDirectoryObjectStore } from '@podmin/data-access-object-store';
import { commitDesiredState } from '@podmin/testing';
import { deploymentKey, serviceVip } from '@podmin/util-desired-state';
import { formatIpv6, parseIpv6 } from '@podmin/util-names';
import { serviceYaml } from '../__fixtures__/snapshot-fixtures';
import type { LocalReadyPod } from '../coordinator.ports';
import { systemElectionTimer, systemMonotonicClock } from '../adapters/system-clocks';
import { readSnapshot } from '../snapshot/snapshot-store';
import { KubeletReadiness } from './kubelet-readiness';

// Run by tools/node-tier.sh against a real kubelet 1.36 after `podmin setup`:
//   PODMIN_NODE_TIER_PODS_SOCKET  kubelet's pods-api.sock
//   PODMIN_NODE_TIER_MANIFESTS    kubelet's static-Pod directory
//   PODMIN_NODE_TIER_IMAGE        the node tier's hello image (its `cat` mode is the probe)
//   PODMIN_NODE_TIER_BUCKET       the local provider's bucket directory the agent leads on
//   PODMIN_NODE_TIER_CLUSTER      the cluster name (the VIP's first input)
//   PODMIN_NODE_TIER_NODE_ADDRESS the node IPv6 address CoreDNS listens on (port 53)
//   PODMIN_NODE_TIER_CRICTL       crictl, and PODMIN_NODE_TIER_CRI_SOCKET containerd's socket:
//                                 the Pod calls its own Service through the VIP dataplane
// The static Pod is written as .json, which kubelet reads and the static-Pod reconciler (which
// owns every *.yaml there) leaves alone. Its exec readiness probe reads a file on a hostPath
// volume, so the test flips readiness from the host.
//
// Through the real agent: a deployment committed in another NodeGroup (so this node never runs
// its Pod) carries the Service `flip` selecting `app: flip`. Services are cluster-wide, so the
// agent (the lone node, hence the leader) selects the static Pod as its backend in
// `dns/services.pb` exactly while kubelet reports it Ready, and CoreDNS answers its VIP
// throughout, because readiness never changes DNS.
function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} must be set (this suite is run by tools/node-tier.sh)`);
  return value;
}
const socket = required('PODMIN_NODE_TIER_PODS_SOCKET');
const manifests = required('PODMIN_NODE_TIER_MANIFESTS');
const image = required('PODMIN_NODE_TIER_IMAGE');
const bucket = new LocalDirectoryObjectStore(required('PODMIN_NODE_TIER_BUCKET'));
const cluster = required('PODMIN_NODE_TIER_CLUSTER');
const nodeAddress = required('PODMIN_NODE_TIER_NODE_ADDRESS');
const crictl = required('PODMIN_NODE_TIER_CRICTL');
const criSocket = required('PODMIN_NODE_TIER_CRI_SOCKET');

/**
 * `/hello get http://flip:8081/` inside the flip Pod `pod`: its resolver, CoreDNS, agent-dns,
 * then the VIP, which agent-dataplane's program on the Pod's own host veth sends back to it.
 */
const cri = ['--runtime-endpoint', `unix://${criSocket}`];

/** The IDs of the running containers of the Pod named `pod`, as containerd lists them. */
async function runningContainers(pod: string): Promise<string[]> {
  const { stdout } = await promisify(execFile)(crictl, [
    ...cri,
    'ps',
    '-q',
    '--state',
    'Running',
    '--label',
    `io.kubernetes.pod.name=${pod}`,
  ]);
  return stdout.split('\n').filter((id) => id !== '');
}

async function getFlipFrom(pod: string): Promise<{ code: number; out: string }> {
  const container = (await runningContainers(pod))[0] ?? '';
  return new Promise((resolve) => {
    execFile(
      crictl,
      [...cri, 'exec', container, '/hello', 'get', 'http://flip:8081/'],
      { timeout: 15_000 },
      (err, out, errOut) =>
        resolve({
          code: err ? Number((err as { code?: unknown }).code ?? 1) : 0,
          out: `${out}${errOut}`,
        }),
    );
  });
}

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

// A NodeGroup this node is not in: its Pod payload is never run here, only its Service counts.
const ELSEWHERE = 'node-tier-elsewhere';
const FLIP_KEY = deploymentKey(ELSEWHERE, 'flip');
const FLIP_VIP = serviceVip(cluster, 'default', 'flip');
const FLIP_NAME = 'flip.default.svc.cluster.local';

/** The canonical IPv6 of a kubelet Pod, as snapshot backends write it. */
function ipv6Of(pod: KubeletPod | undefined): string | undefined {
  const groups = pod?.podIPs.map((ip) => parseIpv6(ip)).find((g) => g !== undefined);
  return groups === undefined ? undefined : formatIpv6(groups);
}

/** The backends of `flip` in the agent's stored snapshot; undefined while it has no `flip`. */
async function flipBackends(): Promise<string[] | undefined> {
  const read = await readSnapshot(bucket, { cluster });
  const flip = read?.snapshot.services.find((s) => s.namespace === 'default' && s.name === 'flip');
  return flip?.backends.map((b) => b.address);
}

/** `dig` through CoreDNS on the node address: the status and the answer records. */
async function dig(name: string): Promise<{ status: string; answers: string[] }> {
  const { stdout } = await promisify(execFile)('dig', [
    '+time=2',
    '+tries=1',
    '+noall',
    '+comments',
    '+answer',
    `@${nodeAddress}`,
    name,
    'AAAA',
  ]);
  const status = /status: ([A-Z]+)/.exec(stdout)?.[1] ?? 'no reply';
  const answers = stdout
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith(';'))
    .map((line) => line.trim().split(/\s+/).join(' '));
  return { status, answers };
}

/** What CoreDNS must answer for `flip` whatever its readiness: the VIP, TTL 5. */
async function expectFlipVip(): Promise<void> {
  expect(await dig(FLIP_NAME)).toEqual({
    status: 'NOERROR',
    answers: [`${FLIP_NAME}. 5 IN AAAA ${FLIP_VIP}`],
  });
}

describe('KubeletReadiness against a real kubelet, and the agent’s snapshot and DNS', () => {
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

  beforeAll(async () => {
    const podYaml = [
      'apiVersion: v1',
      'kind: Pod',
      'metadata:',
      '  name: flip',
      '  labels:',
      '    app: flip',
      'spec:',
      '  containers:',
      '  - name: flip',
      `    image: ${image}`,
      '',
    ].join('\n');
    await commitDesiredState(bucket, {
      deploy: [
        {
          name: 'flip',
          nodegroup: ELSEWHERE,
          podYaml,
          service: {
            name: 'flip',
            namespace: 'default',
            yaml: serviceYaml('default', 'flip', { app: 'flip' }, 8081),
          },
        },
      ],
    });
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
        // Its container is not named hello, and it stops at once: right after this spec the node
        // tier picks the hello Pod's container by its name (tools/node-tier.sh).
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: 'flip',
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
    // Idempotent: the last test removes it already when it gets that far.
    await commitDesiredState(bucket, { remove: [FLIP_KEY] });
    fs.rmSync(manifest, { force: true });
    abort.abort();
    await running;
    client.close();
    fs.rmSync(flagDir, { recursive: true, force: true });
  });

  it('watches kubelet and keeps a Running Pod whose probe fails out of the set and the backends', async () => {
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
    const address = ipv6Of(running);
    expect(address).toBeDefined();
    // The leader picks the committed Service up at its next pass (a poll at most).
    await waitFor('the Service flip in dns/services.pb', flipBackends, 30_000);
    // Several probe periods with the container running and the probe failing: the Service is
    // in the snapshot and in DNS, its Running Pod is not a backend.
    const end = Date.now() + 4_000;
    while (Date.now() < end) {
      expect(await flipBackends()).not.toContain(address);
      await expectFlipVip();
      await new Promise((r) => setTimeout(r, 500));
    }
    const later = (await client.list()).find(isOurs);
    expect(later?.ready).toBe(false);
    expect(later?.containers[0]?.state).toBe('running');
    expect(readiness.current().filter(ours)).toEqual([]);
    expect(notified.some((n) => n.ours.length > 0)).toBe(false);
  }, 180_000);

  it('enters the set and the backends once kubelet reports it Ready, with its canonical IPv6 and labels', async () => {
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
    const readyAt = await waitFor(
      'a notification with the Pod',
      () => notified.find((n) => n.ours.length === 1)?.at,
      5_000,
    );
    process.stderr.write(
      `readiness node tier: probe passing → in the set after ${Date.now() - flippedAt} ms\n`,
    );
    // The agent's own watch sees the same transition; its leader writes the backend.
    await waitFor(
      'the Ready Pod as a backend of flip in dns/services.pb',
      async () => ((await flipBackends())?.includes(entered.address) ? true : undefined),
      15_000,
    );
    process.stderr.write(
      `readiness node tier: Ready (this watch) → backend in dns/services.pb after ${Date.now() - readyAt} ms\n`,
    );
    expect(await flipBackends()).toEqual([entered.address]);
    await expectFlipVip();
    // Through the VIP, once agent-dataplane has programmed the backend.
    const got = await waitFor(
      'an answer through the flip VIP',
      async () => {
        const r = await getFlipFrom(entered.pod);
        return r.code === 0 ? r : undefined;
      },
      15_000,
    );
    expect(got.out).toMatch(/ from /);
  }, 60_000);

  it('leaves the set and the backends when its probe fails, and the set when the Pod is deleted', async () => {
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
    const address = ipv6Of(pod);
    expect(address).toBeDefined();
    const unreadyAt = Date.now();
    await waitFor(
      'the un-Ready Pod out of the backends of flip',
      async () => ((await flipBackends())?.includes(address ?? '') === false ? true : undefined),
      15_000,
    );
    process.stderr.write(
      `readiness node tier: not Ready (this watch) → out of dns/services.pb after ${Date.now() - unreadyAt} ms\n`,
    );
    expect(await flipBackends()).toEqual([]);
    await expectFlipVip();
    // No ready backend: the dataplane refuses new connections to the VIP at once.
    const refused = await waitFor(
      'the flip VIP refusing connections',
      async () => {
        const r = await getFlipFrom(pod?.name ?? '');
        // crictl exits 1 whatever the command's status; hello get says why it failed.
        return r.code !== 0 && /Connection refused/.test(r.out) ? r : undefined;
      },
      15_000,
    );
    expect(refused.out).toMatch(/Connection refused/);

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
    // kubelet lists the Pod no more while it still stops the container: nothing of it may
    // outlive this spec.
    await waitFor(
      'no container of the Pod running',
      async () => ((await runningContainers(pod?.name ?? '')).length === 0 ? true : undefined),
      60_000,
    );
    expect(readiness.health()).toMatchObject({ ok: true, state: 'watching' });
  }, 240_000);

  it('drops the Service from the snapshot and DNS when its deployment is removed', async () => {
    await commitDesiredState(bucket, { remove: [FLIP_KEY] });
    await waitFor(
      'flip out of dns/services.pb',
      async () => ((await flipBackends()) === undefined ? true : undefined),
      30_000,
    );
    await waitFor(
      'NXDOMAIN for flip through CoreDNS',
      async () => ((await dig(FLIP_NAME)).status === 'NXDOMAIN' ? true : undefined),
      10_000,
    );
    expect((await dig(FLIP_NAME)).answers).toEqual([]);
  }, 60_000);
});
