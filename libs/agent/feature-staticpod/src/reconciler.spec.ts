import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { commitDesiredState, InMemoryObjectStore } from '@podmin/testing';
import { PodminError } from '@podmin/util-errors';
import { INDEX_KEY, podPayloadKey, servicePayloadKey } from '@podmin/util-desired-state';
import { podRevision } from '@podmin/util-receipts';
import { buildDeployment } from '@podmin/util-manifest';
import { FakeIdentity, FakeSecrets, RecordingSink } from './__fixtures__/fake-ports';
import { nodePaths } from './node-paths';
import { DegradedPassError } from './reconcile-outcome';
import { MISSING_INDEX_GRACE_MS, StaticPodReconciler } from './reconciler';

const manifest = (name: string, opts: { image?: string; service?: boolean } = {}) => `
apiVersion: apps/v1
kind: DaemonSet
metadata: { name: ${name}, namespace: product }
spec:
  selector: { matchLabels: { app: ${name} } }
  template:
    metadata:
      labels: { app: ${name} }
      annotations: { podmin.dev/aws-parameter-store: token }
    spec:
      nodeSelector: { podmin.dev/nodegroup: workers }
      containers: [{ name: app, image: ${opts.image ?? 'hello:v1'} }]
${opts.service ? `---\napiVersion: v1\nkind: Service\nmetadata: { name: ${name}-svc, namespace: product }\nspec:\n  selector: { app: ${name} }\n  ports: [{ port: 80 }]\n` : ''}`;

const deployment = (name: string, opts: Parameters<typeof manifest>[1] = {}) =>
  buildDeployment(manifest(name, opts), { source: 'test', name });

/** A pass's outcome that published, changing and removing these many Pod files. */
const published = (changedFiles: number, removedFiles: number) => ({
  status: 'published' as const,
  changedFiles,
  removedFiles,
});

/** Clock fake: a fixed instant the test can move. */
class FakeClock {
  instant = new Date('2026-01-02T03:04:05Z');
  readonly now = (): Date => this.instant;
}

describe('StaticPodReconciler decisions', () => {
  let root: string;
  let store: InMemoryObjectStore;
  let secrets: FakeSecrets;
  let identity: FakeIdentity;
  let sink: RecordingSink;
  let clock: FakeClock;
  let reconciler: StaticPodReconciler;
  const paths = () => nodePaths(root);
  const manifests = () =>
    fs.existsSync(paths().manifests) ? fs.readdirSync(paths().manifests).sort() : [];
  const workloadFiles = () =>
    fs.existsSync(paths().workloads)
      ? fs.readdirSync(paths().workloads, { recursive: true }).map(String).sort()
      : [];

  /** A reconciler of node root {@link root} on this test's fakes, as the agent starts one. */
  const startReconciler = () =>
    new StaticPodReconciler(
      { cluster: 'demo', nodegroup: 'workers', nodeAddress: 'fd00::1', paths: paths() },
      store,
      secrets,
      identity,
      sink,
      clock.now,
    );

  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-reconciler-'));
    store = new InMemoryObjectStore();
    secrets = new FakeSecrets((name) => `value of ${name}`);
    identity = new FakeIdentity('2026-01-03T03:04:05Z');
    sink = new RecordingSink();
    clock = new FakeClock();
    reconciler = startReconciler();
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('publishes a new deployment, its secrets and its Service, and records the clock', async () => {
    await commitDesiredState(store, { deploy: [deployment('web', { service: true })] });
    await expect(reconciler.reconcileOnce()).resolves.toEqual(published(1, 0));
    expect(manifests()).toEqual(['web.yaml']);
    expect(secrets.fetched).toEqual(['aws-parameter-store:/demo/product/web/token']);
    expect(sink.published).toEqual([
      [expect.objectContaining({ namespace: 'product', name: 'web-svc', owner: 'workers/web' })],
    ]);
    expect(reconciler.status()).toEqual({
      healthy: true,
      lastError: null,
      lastSuccess: clock.instant,
      indexEtag: store.objects.get(INDEX_KEY)!.etag,
      pods: ['web'],
    });
  });

  it('skips an unchanged index: one conditional read and the fence, no payload reads', async () => {
    await commitDesiredState(store, { deploy: [deployment('web')] });
    await reconciler.reconcileOnce();
    const before = fs.statSync(path.join(paths().manifests, 'web.yaml')).mtimeMs;
    store.calls.length = 0;
    await expect(reconciler.reconcileOnce()).resolves.toEqual({ status: 'unchanged' });
    expect(store.calls).toEqual([`getIfChanged ${INDEX_KEY}`, `getIfChanged ${INDEX_KEY}`]);
    expect(fs.statSync(path.join(paths().manifests, 'web.yaml')).mtimeMs).toBe(before);
    expect(secrets.fetched).toHaveLength(1);
    expect(sink.published).toHaveLength(1);
  });

  it('publishes nothing when the index changes between its read and the fence', async () => {
    await commitDesiredState(store, { deploy: [deployment('web')] });
    identity.duringEnsure = async () => {
      identity.duringEnsure = undefined;
      await commitDesiredState(store, { deploy: [deployment('api')] });
    };
    await expect(reconciler.reconcileOnce()).rejects.toMatchObject({
      code: 'PRECONDITION_FAILED',
      message: expect.stringContaining('index changed while staging') as string,
    });
    expect(manifests()).toEqual([]);
    expect(workloadFiles()).toEqual([]);
    expect(sink.published).toEqual([]);
    expect(reconciler.status()).toMatchObject({ healthy: false, lastSuccess: null });
    // The next pass rereads the whole index and converges.
    await reconciler.reconcileOnce();
    expect(manifests()).toEqual(['api.yaml', 'web.yaml']);
  });

  it('removes departed Pods: manifest, workload files and identity', async () => {
    await commitDesiredState(store, { deploy: [deployment('web'), deployment('api')] });
    await reconciler.reconcileOnce();
    expect(workloadFiles()).toEqual(expect.arrayContaining(['api', 'web']));
    await commitDesiredState(store, { remove: ['workers/web'] });
    await expect(reconciler.reconcileOnce()).resolves.toEqual(published(0, 1));
    expect(manifests()).toEqual(['api.yaml']);
    expect(identity.removed).toEqual(['web']);
    expect(workloadFiles().some((f) => f.startsWith('web'))).toBe(false);
    expect(reconciler.status().pods).toEqual(['api']);
  });

  it('stops at a cancelled deadline and writes no file after the abort', async () => {
    await commitDesiredState(store, { deploy: [deployment('web', { service: true })] });
    const deadline = new AbortController();
    const reason = new PodminError('SERVICE_UNAVAILABLE', 'the pass exceeded its deadline');
    identity.duringEnsure = () => {
      deadline.abort(reason);
      return Promise.resolve();
    };
    await expect(reconciler.reconcileOnce(deadline.signal)).rejects.toBe(reason);
    expect(manifests()).toEqual([]);
    expect(workloadFiles()).toEqual([]);
    expect(sink.published).toEqual([]);
    expect(reconciler.status().lastError).toBe('the pass exceeded its deadline');
    // An already-cancelled signal stops a pass before it publishes anything either.
    identity.duringEnsure = undefined;
    await expect(reconciler.reconcileOnce(deadline.signal)).rejects.toBe(reason);
    expect(manifests()).toEqual([]);
  });

  it('refuses to start a pass while one runs', async () => {
    await commitDesiredState(store, { deploy: [deployment('web')] });
    let release: () => void = () => undefined;
    identity.duringEnsure = () => new Promise<void>((resolve) => (release = resolve));
    const first = reconciler.reconcileOnce();
    await new Promise((resolve) => setImmediate(resolve));
    await expect(reconciler.reconcileOnce()).rejects.toThrow(/a pass is still running/);
    release();
    await expect(first).resolves.toMatchObject({ status: 'published' });
  });

  it('rejects a payload the strict parser refuses even though its digest matches', async () => {
    await commitDesiredState(store, { deploy: [deployment('web')] });
    await reconciler.reconcileOnce();
    const published = fs.readFileSync(path.join(paths().manifests, 'web.yaml'), 'utf8');
    // Raw yaml.parse would take the last of the duplicate keys; the strict parser refuses it.
    const duplicate = `${deployment('web', { image: 'hello:v2' }).podYaml}kind: Pod\n`;
    const key = podPayloadKey('workers', duplicate);
    store.store(key, duplicate);
    await commitDesiredState(store, { entries: { 'workers/web': { pod: key } } });
    await expect(reconciler.reconcileOnce()).rejects.toMatchObject({
      code: 'INVALID_MANIFEST',
      message: expect.stringContaining('duplicate map key') as string,
    });
    // A Pod without containers is refused by the validator as well.
    const shapeless = 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec: {}\n';
    const shapelessKey = podPayloadKey('workers', shapeless);
    store.store(shapelessKey, shapeless);
    await commitDesiredState(store, { entries: { 'workers/web': { pod: shapelessKey } } });
    await expect(reconciler.reconcileOnce()).rejects.toThrow(/spec\.containers: is required/);
    expect(fs.readFileSync(path.join(paths().manifests, 'web.yaml'), 'utf8')).toBe(published);
  });

  it('refuses an index another tool edited to give one Service two owners', async () => {
    const web = deployment('web', { service: true });
    await commitDesiredState(store, { deploy: [web] });
    await reconciler.reconcileOnce();
    const api = deployment('api');
    const apiPod = podPayloadKey('workers', api.podYaml);
    store.store(apiPod, api.podYaml);
    const index = JSON.parse(store.objects.get(INDEX_KEY)!.body.toString()) as Record<
      string,
      unknown
    >;
    index['workers/api'] = {
      pod: apiPod,
      service: servicePayloadKey('product', 'web-svc', web.service!.yaml),
    };
    store.store(INDEX_KEY, JSON.stringify(index));
    await expect(reconciler.reconcileOnce()).rejects.toThrow(
      'Service product/web-svc is owned by workers/api and workers/web',
    );
    expect(manifests()).toEqual(['web.yaml']);
    expect(sink.published).toHaveLength(1);
  });

  it('keeps everything while a vanished index is within its grace, then counts it as empty', async () => {
    await commitDesiredState(store, { deploy: [deployment('web')] });
    await reconciler.reconcileOnce();
    store.objects.delete(INDEX_KEY);
    const err = await reconciler.reconcileOnce().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DegradedPassError);
    expect(err).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    expect(String(err)).toContain('deployments/index.json disappeared 0 s ago');
    expect(reconciler.status()).toMatchObject({ healthy: false, pods: ['web'] });
    clock.instant = new Date(clock.instant.getTime() + MISSING_INDEX_GRACE_MS - 1);
    await expect(reconciler.reconcileOnce()).rejects.toBeInstanceOf(DegradedPassError);
    expect(manifests()).toEqual(['web.yaml']);
    expect(identity.removed).toEqual([]);
    clock.instant = new Date(clock.instant.getTime() + 1);
    await expect(reconciler.reconcileOnce()).resolves.toMatchObject({
      status: 'published',
      removedFiles: 1,
      warning: expect.stringContaining('counting it as empty desired state') as string,
    });
    expect(manifests()).toEqual([]);
    expect(identity.removed).toEqual(['web']);
    // From now on this is a node without an index: missing is simply empty, no grace.
    await expect(reconciler.reconcileOnce()).resolves.toEqual({ status: 'unchanged' });
  });

  it('says the index is missing, and since when, for as long as it is, even once emptied', async () => {
    await commitDesiredState(store, { deploy: [deployment('web')] });
    await reconciler.reconcileOnce();
    expect(reconciler.indexMissing()).toBeUndefined();
    const index = store.objects.get(INDEX_KEY)!;
    store.objects.delete(INDEX_KEY);
    const since = clock.instant.toISOString();
    await expect(reconciler.reconcileOnce()).rejects.toBeInstanceOf(DegradedPassError);
    expect(reconciler.indexMissing()).toBe(
      `desired state: index missing since ${since} (${INDEX_KEY}); keeping every Pod until it has been missing for 25 s`,
    );
    expect(reconciler.applied().error).toBe(reconciler.indexMissing());
    clock.instant = new Date(clock.instant.getTime() + MISSING_INDEX_GRACE_MS);
    await reconciler.reconcileOnce();
    clock.instant = new Date(clock.instant.getTime() + 60_000);
    await expect(reconciler.reconcileOnce()).resolves.toEqual({ status: 'unchanged' });
    expect(manifests()).toEqual([]);
    // Emptied, passing, and still saying why it runs nothing.
    expect(reconciler.indexMissing()).toBe(
      `desired state: index missing since ${since} (${INDEX_KEY}); counted as empty desired state after 25 s, so this node runs no Pods of NodeGroup workers`,
    );
    expect(reconciler.applied().error).toContain('index missing since');
    store.objects.set(INDEX_KEY, index);
    await reconciler.reconcileOnce();
    expect(reconciler.indexMissing()).toBeUndefined();
    expect(reconciler.applied().error).toBeNull();
    expect(manifests()).toEqual(['web.yaml']);
  });

  it('restarts the grace when the index returns, and reissues nothing', async () => {
    await commitDesiredState(store, { deploy: [deployment('web')] });
    await reconciler.reconcileOnce();
    const index = store.objects.get(INDEX_KEY)!;
    store.objects.delete(INDEX_KEY);
    await expect(reconciler.reconcileOnce()).rejects.toBeInstanceOf(DegradedPassError);
    store.objects.set(INDEX_KEY, index);
    const fetched = secrets.fetched.length;
    await expect(reconciler.reconcileOnce()).resolves.toEqual({ status: 'unchanged' });
    expect(secrets.fetched).toHaveLength(fetched);
    expect(reconciler.status().healthy).toBe(true);
    clock.instant = new Date(clock.instant.getTime() + MISSING_INDEX_GRACE_MS);
    store.objects.delete(INDEX_KEY);
    await expect(reconciler.reconcileOnce()).rejects.toBeInstanceOf(DegradedPassError);
    expect(manifests()).toEqual(['web.yaml']);
  });

  it('treats a missing index as vanished after a restart when Pods are published', async () => {
    await commitDesiredState(store, { deploy: [deployment('web')] });
    await reconciler.reconcileOnce();
    store.objects.delete(INDEX_KEY);
    const restarted = startReconciler();
    await expect(restarted.reconcileOnce()).rejects.toThrow(/disappeared/);
    expect(manifests()).toEqual(['web.yaml']);
  });

  it('lets the others converge while one deployment is broken, which keeps its last Pod', async () => {
    await commitDesiredState(store, { deploy: [deployment('web'), deployment('api')] });
    await reconciler.reconcileOnce();
    const webV1 = fs.readFileSync(path.join(paths().manifests, 'web.yaml'), 'utf8');
    const missing = podPayloadKey('workers', deployment('web', { image: 'hello:v2' }).podYaml);
    await commitDesiredState(store, {
      entries: { 'workers/web': { pod: missing } },
      deploy: [deployment('api', { image: 'hello:v2' })],
    });
    const err = (await reconciler.reconcileOnce().catch((e: unknown) => e)) as DegradedPassError;
    expect(err).toBeInstanceOf(DegradedPassError);
    expect(err.code).toBe('OBJECT_NOT_FOUND');
    expect(err.message).toContain('deployment workers/web keeps its last published Pod');
    expect(err.faults).toEqual([
      { deployment: 'workers/web', error: expect.any(String) as string, kept: true },
    ]);
    expect(err.result).toMatchObject({ status: 'published', changedFiles: 1 });
    expect(fs.readFileSync(path.join(paths().manifests, 'api.yaml'), 'utf8')).toContain('hello:v2');
    expect(fs.readFileSync(path.join(paths().manifests, 'web.yaml'), 'utf8')).toBe(webV1);
    expect(workloadFiles()).toEqual(expect.arrayContaining(['api', 'web']));
    expect(reconciler.status()).toMatchObject({ healthy: false });
    expect(reconciler.pending).toBe(true);
    // The receipt's view: web still runs v1 and says why; api runs v2; the node itself is fine.
    const applied = reconciler.applied();
    expect(applied.error).toBeNull();
    expect(applied.deployments).toEqual([
      {
        deployment: 'workers/api',
        revision: podRevision(
          podPayloadKey('workers', deployment('api', { image: 'hello:v2' }).podYaml),
        ),
        published: { namespace: 'product', annotation: expect.any(String) as string },
        identityExpiry: '2026-01-03T03:04:05Z',
        fault: null,
      },
      {
        deployment: 'workers/web',
        revision: podRevision(podPayloadKey('workers', deployment('web').podYaml)),
        published: { namespace: 'product', annotation: expect.any(String) as string },
        identityExpiry: '2026-01-03T03:04:05Z',
        fault: expect.stringContaining(missing) as string,
      },
    ]);
    // Repaired: it converges on the next pass.
    store.store(missing, deployment('web', { image: 'hello:v2' }).podYaml);
    await expect(reconciler.reconcileOnce()).resolves.toMatchObject({ status: 'published' });
    expect(fs.readFileSync(path.join(paths().manifests, 'web.yaml'), 'utf8')).toContain('hello:v2');
  });

  it('removes nothing as stale while a deployment it never published is broken', async () => {
    await commitDesiredState(store, { deploy: [deployment('web')] });
    await startReconciler().reconcileOnce();
    // After a restart the payload of web is gone: its Pod name is unknown, so its file stays.
    const key = JSON.parse(store.objects.get(INDEX_KEY)!.body.toString()) as Record<
      string,
      { pod: string }
    >;
    store.objects.delete(key['workers/web']!.pod);
    await commitDesiredState(store, { deploy: [deployment('api')] });
    const restartedOnce = startReconciler();
    const err = (await restartedOnce.reconcileOnce().catch((e: unknown) => e)) as DegradedPassError;
    expect(err.faults).toMatchObject([{ deployment: 'workers/web', kept: false }]);
    expect(restartedOnce.applied().deployments).toMatchObject([
      { deployment: 'workers/api', revision: expect.stringMatching(/^[0-9a-f]{12}$/) as string },
      { deployment: 'workers/web', revision: null, published: null },
    ]);
    expect(err.message).toContain('deployment workers/web is not published');
    expect(manifests()).toEqual(['api.yaml', 'web.yaml']);
    expect(identity.removed).toEqual([]);
  });
});
