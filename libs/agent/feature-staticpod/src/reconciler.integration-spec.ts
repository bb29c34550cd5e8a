import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { LocalDirectoryObjectStore, type ObjectStore } from '@podmin/data-access-object-store';
import { PodminError } from '@podmin/util-errors';
import { commitDesiredState, fileTree } from '@podmin/testing';
import { INDEX_KEY, parseIndex } from '@podmin/util-desired-state';
import { buildDeployment } from '@podmin/util-manifest';
import { FakeIdentity, FakeSecrets, RecordingSink } from './__fixtures__/fake-ports';
import { nodePaths } from './node-paths';
import { StaticPodReconciler } from './reconciler';

const manifest = (
  name: string,
  ng: string,
  opts: { image?: string; secrets?: string; service?: boolean } = {},
) => `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: ${name}
  namespace: product
spec:
  selector:
    matchLabels:
      app: ${name}
  template:
    metadata:
      labels:
        app: ${name}
${opts.secrets ? `      annotations:\n        podmin.dev/aws-parameter-store: ${opts.secrets}\n        podmin.dev/aws-secrets-manager: token\n` : ''}    spec:
      nodeSelector:
        podmin.dev/nodegroup: ${ng}
      containers:
        - name: app
          image: ${opts.image ?? 'hello:v1'}
${opts.service ? `---\napiVersion: v1\nkind: Service\nmetadata:\n  name: ${name}-svc\n  namespace: product\nspec:\n  selector:\n    app: ${name}\n  ports:\n    - port: 80\n      targetPort: 8080\n` : ''}`;

/** Commits a deployment through the desired-state library, as the CLI does. */
async function deploy(
  store: ObjectStore,
  name: string,
  ng: string,
  opts: Parameters<typeof manifest>[2] = {},
): Promise<void> {
  const d = buildDeployment(manifest(name, ng, opts), { source: 'test', name, nodegroup: ng });
  await commitDesiredState(store, { deploy: [d] });
}

/** Store wrapper that can be switched to unreachable. */
function switchable(store: ObjectStore): ObjectStore & { down: boolean } {
  const wrapper = {
    down: false,
    get: (...a: Parameters<ObjectStore['get']>) =>
      wrapper.down
        ? Promise.reject(new PodminError('BUCKET_UNAVAILABLE', 'connect ECONNREFUSED'))
        : store.get(...a),
    getIfChanged: (...a: Parameters<ObjectStore['getIfChanged']>) =>
      wrapper.down
        ? Promise.reject(new PodminError('BUCKET_UNAVAILABLE', 'connect ECONNREFUSED'))
        : store.getIfChanged(...a),
  };
  return wrapper as unknown as ObjectStore & { down: boolean };
}

describe('StaticPodReconciler on a real filesystem and local bucket', () => {
  let tmp: string;
  let store: LocalDirectoryObjectStore;
  let reader: ReturnType<typeof switchable>;
  let secrets: FakeSecrets;
  let identity: FakeIdentity;
  let sink: RecordingSink;
  let reconciler: StaticPodReconciler;
  const paths = () => nodePaths(path.join(tmp, 'node'));
  const make = () =>
    new StaticPodReconciler(
      { cluster: 'demo', nodegroup: 'workers', nodeAddress: 'fd00::1', paths: paths() },
      reader,
      secrets,
      identity,
      sink,
    );

  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-staticpod-'));
    fs.mkdirSync(path.join(tmp, 'bucket'));
    store = new LocalDirectoryObjectStore(path.join(tmp, 'bucket'));
    reader = switchable(store);
    secrets = new FakeSecrets();
    secrets.values.set('/demo/product/web/db-url', 'postgres://db');
    secrets.values.set('/demo/product/web/token', 's3cr3t');
    identity = new FakeIdentity();
    sink = new RecordingSink();
    reconciler = make();
  });
  afterEach(() => {
    try {
      execFileSync('chattr', ['-R', '-i', tmp], { stdio: 'ignore' });
    } catch {
      // not immutable
    }
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('treats a missing index as empty desired state', async () => {
    await expect(reconciler.reconcileOnce()).resolves.toMatchObject({ status: 'published' });
    expect(fs.readdirSync(paths().manifests)).toEqual([]);
    expect(reconciler.status().healthy).toBe(true);
  });

  it('publishes only its NodeGroup, with revision, identity, DNS and read-only secret mounts', async () => {
    await deploy(store, 'web', 'workers', { secrets: 'db-url', service: true });
    await deploy(store, 'other', 'edge');
    await reconciler.reconcileOnce();
    expect(fs.readdirSync(paths().manifests)).toEqual(['web.yaml']);
    const pod = parseYaml(
      fs.readFileSync(path.join(paths().manifests, 'web.yaml'), 'utf8'),
    ) as Record<string, any>;
    expect(pod['metadata']['annotations']['podmin.dev/revision']).toMatch(/^[0-9a-f]{32}$/);
    expect(pod['metadata']['annotations']['podmin.dev/identity-revision']).toMatch(
      /^[0-9a-f]{64}$/,
    );
    expect(pod['spec']['dnsConfig']).toEqual({
      nameservers: ['fd00::1'],
      searches: ['product.svc.cluster.local', 'svc.cluster.local', 'cluster.local'],
    });
    const mounts = pod['spec']['containers'][0]['volumeMounts'] as Array<{
      mountPath: string;
      readOnly: boolean;
    }>;
    expect(mounts).toEqual(
      expect.arrayContaining([
        {
          name: 'podmin-aws-parameter-store',
          mountPath: '/var/run/podmin/aws-parameter-store',
          readOnly: true,
        },
        {
          name: 'podmin-aws-secrets-manager',
          mountPath: '/var/run/podmin/aws-secrets-manager',
          readOnly: true,
        },
        {
          name: 'podmin-workload-identity',
          mountPath: '/var/run/secrets/podmin.dev/tls',
          readOnly: true,
        },
      ]),
    );
    const volumes = pod['spec']['volumes'] as Array<{ name: string; hostPath: { path: string } }>;
    const secretVolume = volumes.find((v) => v.name === 'podmin-aws-parameter-store')!;
    const secretFile = path.join(secretVolume.hostPath.path, 'db-url');
    expect(fs.readFileSync(secretFile, 'utf8')).toBe('postgres://db');
    expect(fs.statSync(secretFile).mode & 0o777).toBe(0o444);
    expect(volumes.find((v) => v.name === 'podmin-workload-identity')?.hostPath.path).toBe(
      path.join(paths().workloads, 'web', 'identity'),
    );
    expect(sink.published.at(-1)).toEqual([
      expect.objectContaining({ namespace: 'product', name: 'web-svc', owner: 'workers/web' }),
    ]);
    // Only this NodeGroup's payloads were fetched, and secrets only as declared.
    expect(secrets.fetched.sort()).toEqual([
      'aws-parameter-store:/demo/product/web/db-url',
      'aws-secrets-manager:/demo/product/web/token',
    ]);
  });

  it('does nothing on an unchanged index and fetches secrets again only for a new revision or after a restart', async () => {
    await deploy(store, 'web', 'workers', { secrets: 'db-url' });
    await reconciler.reconcileOnce();
    const file = path.join(paths().manifests, 'web.yaml');
    const before = fs.statSync(file).mtimeMs;
    await expect(reconciler.reconcileOnce()).resolves.toEqual({ status: 'unchanged' });
    expect(fs.statSync(file).mtimeMs).toBe(before);
    expect(secrets.fetched).toHaveLength(2);
    await deploy(store, 'web', 'workers', { secrets: 'db-url', image: 'hello:v2' });
    await reconciler.reconcileOnce();
    expect(secrets.fetched).toHaveLength(4);
    expect(fs.readFileSync(file, 'utf8')).toContain('hello:v2');
    // Only the current revision's secret directory remains.
    expect(fs.readdirSync(path.join(paths().workloads, 'web', 'secrets'))).toHaveLength(1);
    await make().reconcileOnce();
    expect(secrets.fetched).toHaveLength(6);
  });

  it('republishes a Pod whose certificate alone changed, with only its identity annotation new', async () => {
    await deploy(store, 'web', 'workers', { secrets: 'db-url', service: true });
    await reconciler.reconcileOnce();
    const file = path.join(paths().manifests, 'web.yaml');
    const before = parseYaml(fs.readFileSync(file, 'utf8')) as Record<string, any>;
    const indexBefore = (await store.get(INDEX_KEY)).etag;
    // Same index, same payloads, same secrets: nothing to publish.
    await expect(reconciler.reconcileOnce()).resolves.toEqual({ status: 'unchanged' });

    // agent-identity renewed the workload certificate: a new fingerprint, nothing else.
    identity.generation++;
    await expect(reconciler.reconcileOnce()).resolves.toEqual({
      status: 'published',
      changedFiles: 1,
      removedFiles: 0,
    });
    expect((await store.get(INDEX_KEY)).etag).toBe(indexBefore);
    const after = parseYaml(fs.readFileSync(file, 'utf8')) as Record<string, any>;
    const annotation = 'podmin.dev/identity-revision';
    expect(after['metadata']['annotations'][annotation]).not.toBe(
      before['metadata']['annotations'][annotation],
    );
    // kubelet restarts the Pod for the annotation alone: everything else is as it was.
    delete before['metadata']['annotations'][annotation];
    delete after['metadata']['annotations'][annotation];
    expect(after).toEqual(before);
    await expect(reconciler.reconcileOnce()).resolves.toEqual({ status: 'unchanged' });
  });

  it('removes deleted deployments, their workload files and stale manifests', async () => {
    await deploy(store, 'web', 'workers', { secrets: 'db-url' });
    await deploy(store, 'api', 'workers');
    await reconciler.reconcileOnce();
    fs.writeFileSync(path.join(paths().manifests, 'stray.yaml'), 'kind: Pod\n');
    await commitDesiredState(store, { remove: ['workers/web'] });
    const result = await reconciler.reconcileOnce();
    expect(result).toEqual({ status: 'published', changedFiles: 0, removedFiles: 2 });
    expect(fs.readdirSync(paths().manifests)).toEqual(['api.yaml']);
    expect(fs.existsSync(path.join(paths().workloads, 'web'))).toBe(false);
    expect(identity.removed).toContain('web');
  });

  describe('faults keep the published state, report unhealthy and converge once cleared', () => {
    let published: Record<string, string>;
    beforeEach(async () => {
      await deploy(store, 'web', 'workers', { secrets: 'db-url' });
      await reconciler.reconcileOnce();
      published = fileTree(path.join(tmp, 'node'));
    });

    async function expectFaultThenRecovery(
      inject: () => Promise<void>,
      clear: () => Promise<void>,
      message: RegExp,
    ): Promise<void> {
      await inject();
      await expect(reconciler.reconcileOnce()).rejects.toThrow(message);
      expect(reconciler.status()).toMatchObject({ healthy: false });
      expect(reconciler.status().lastError).toMatch(message);
      expect(fileTree(path.join(tmp, 'node'))).toEqual(published);
      await clear();
      await reconciler.reconcileOnce();
      expect(reconciler.status()).toMatchObject({ healthy: true, lastError: null });
      expect(fs.readFileSync(path.join(paths().manifests, 'web.yaml'), 'utf8')).toContain(
        'hello:v2',
      );
    }

    it('corrupt payload digest', async () => {
      let podKey = '';
      await expectFaultThenRecovery(
        async () => {
          await deploy(store, 'web', 'workers', { secrets: 'db-url', image: 'hello:v2' });
          podKey = parseIndex((await store.get(INDEX_KEY)).body)['workers/web']!.pod;
          fs.appendFileSync(path.join(tmp, 'bucket', podKey), '# tampered\n');
        },
        async () => {
          const d = buildDeployment(
            manifest('web', 'workers', { secrets: 'db-url', image: 'hello:v2' }),
            { source: 't' },
          );
          await store.put(podKey, d.podYaml);
        },
        /not the digest in its path/,
      );
    });

    it('missing payload', async () => {
      let podKey = '';
      let yaml = '';
      await expectFaultThenRecovery(
        async () => {
          await deploy(store, 'web', 'workers', { secrets: 'db-url', image: 'hello:v2' });
          podKey = parseIndex((await store.get(INDEX_KEY)).body)['workers/web']!.pod;
          yaml = (await store.get(podKey)).body.toString();
          await store.delete(podKey);
        },
        async () => {
          await store.put(podKey, yaml);
        },
        /does not exist/,
      );
    });

    it('index changed during staging', async () => {
      await expectFaultThenRecovery(
        async () => {
          await deploy(store, 'web', 'workers', { secrets: 'db-url', image: 'hello:v2' });
          identity.duringEnsure = async () => {
            identity.duringEnsure = undefined;
            await deploy(store, 'late', 'edge');
          };
        },
        () => Promise.resolve(),
        /index changed while staging/,
      );
    });

    it('object store unreachable', async () => {
      await expectFaultThenRecovery(
        async () => {
          await deploy(store, 'web', 'workers', { secrets: 'db-url', image: 'hello:v2' });
          reader.down = true;
        },
        () => {
          reader.down = false;
          return Promise.resolve();
        },
        /ECONNREFUSED/,
      );
    });

    it('secret fetch failure', async () => {
      await expectFaultThenRecovery(
        async () => {
          await deploy(store, 'web', 'workers', { secrets: 'db-url', image: 'hello:v2' });
          secrets.failing = true;
        },
        () => {
          secrets.failing = false;
          return Promise.resolve();
        },
        /provider unreachable/,
      );
    });

    it('manifests directory not writable', async () => {
      await expectFaultThenRecovery(
        async () => {
          await deploy(store, 'web', 'workers', { secrets: 'db-url', image: 'hello:v2' });
          execFileSync('chattr', ['+i', paths().manifests]);
        },
        () => {
          execFileSync('chattr', ['-i', paths().manifests]);
          return Promise.resolve();
        },
        /EPERM|operation not permitted/i,
      );
    });
  });
});
