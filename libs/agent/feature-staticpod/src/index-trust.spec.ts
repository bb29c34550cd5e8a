import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { putPayload } from '@podmin/data-access-desired-state';
import { daemonSetManifest, InMemoryObjectStore } from '@podmin/testing';
import { PodminError } from '@podmin/util-errors';
import {
  deploymentKey,
  INDEX_KEY,
  podPayloadKey,
  serializeIndex,
  type DesiredIndex,
  type IndexEntry,
  type IndexSignature,
} from '@podmin/util-desired-state';
import { buildDeployment } from '@podmin/util-manifest';
import {
  generateSigningKey,
  localSigner,
  publicKeyOfPrivate,
  serializeDeployers,
  signIndexText,
  type Deployer,
  type IndexSigner,
} from '@podmin/util-trust';
import { FakeIdentity, FakeSecrets, RecordingSink } from './__fixtures__/fake-ports';
import { GENERATION_FILE, TRUST_LIST_FALLBACK_MS } from './index-trust';
import { nodePaths } from './node-paths';
import { DegradedPassError } from './reconcile-outcome';
import { StaticPodReconciler } from './reconciler';
import type { TrustListReader } from './staticpod.ports';

const TRUST_LIST = '/demo/_system/deployers';

/** Trust-list fake: the stored bytes (NOT_FOUND when unset) or a failure; records each read. */
class FakeTrustList implements TrustListReader {
  body: string | undefined;
  failure: PodminError | undefined;
  readonly reads: string[] = [];
  get(name: string): Promise<Buffer> {
    this.reads.push(name);
    if (this.failure) return Promise.reject(this.failure);
    if (name !== TRUST_LIST || this.body === undefined)
      return Promise.reject(new PodminError('NOT_FOUND', `reading ${name}: no such parameter`));
    return Promise.resolve(Buffer.from(this.body));
  }
  /** Stores a list of these deployers (none: deletes it, as `trust remove` of the last one). */
  trust(...signers: Array<{ name: string; privatePem: string }>): void {
    this.body =
      signers.length === 0
        ? undefined
        : serializeDeployers({
            version: 1,
            deployers: signers.map((s): Deployer => {
              const key = publicKeyOfPrivate(s.privatePem, s.name);
              return {
                name: s.name,
                algorithm: key.algorithm,
                publicKey: key.pem,
                added: '2026-01-01T00:00:00Z',
              };
            }),
          });
  }
}

const alice = { name: 'alice', ...generateSigningKey() };
const bob = { name: 'bob', ...generateSigningKey() };
const signerOf = (who: { name: string; privatePem: string }): IndexSigner =>
  localSigner(who.name, who.privatePem, who.name);

describe('StaticPodReconciler verifies desired state against the trust list', () => {
  let root: string;
  let store: InMemoryObjectStore;
  let trustList: FakeTrustList;
  let logged: Array<{ message: string; fields: Record<string, unknown> }>;
  let reconciler: StaticPodReconciler;
  let previous: IndexSignature | undefined;
  let nowMs: number;
  /** The node's clock: fixed, moved on by tests of the trust list's age. */
  let clockMs: number;
  const paths = () => nodePaths(root);
  const generationFile = () => path.join(paths().state, GENERATION_FILE);

  /** Every file the node holds for its Pods, by path: what must stay byte-identical. */
  const nodeFiles = (): Record<string, string> => {
    const out: Record<string, string> = {};
    for (const dir of [paths().manifests, paths().workloads]) {
      if (!fs.existsSync(dir)) continue;
      for (const f of fs.readdirSync(dir, { recursive: true }).map(String)) {
        const p = path.join(dir, f);
        if (fs.statSync(p).isFile()) out[path.relative(root, p)] = fs.readFileSync(p, 'utf8');
      }
    }
    return out;
  };

  const newReconciler = () =>
    new StaticPodReconciler(
      { cluster: 'demo', nodegroup: 'workers', nodeAddress: 'fd00::1', paths: paths() },
      store,
      new FakeSecrets(),
      new FakeIdentity('2026-01-03T03:04:05Z'),
      new RecordingSink(),
      () => new Date(clockMs),
      { trustList, log: (message, fields) => logged.push({ message, fields }) },
    );

  /** Writes the payloads of `images` (deployment name → image) and returns their entries. */
  async function entriesFor(images: Record<string, string>): Promise<DesiredIndex> {
    const index: Record<string, IndexEntry> = {};
    for (const [name, image] of Object.entries(images)) {
      const d = buildDeployment(daemonSetManifest({ name, image, nodegroup: 'workers' }), {
        source: 'test',
        name,
      });
      const pod = podPayloadKey('workers', d.podYaml);
      await putPayload(store, pod, d.podYaml);
      index[deploymentKey('workers', name)] = { pod };
    }
    return index;
  }

  /** Commits `index` signed by `who` as the write after the last signed one; returns its text. */
  async function commitSigned(
    index: DesiredIndex,
    who: { name: string; privatePem: string } = alice,
  ): Promise<string> {
    nowMs += 1000;
    const signed = await signIndexText(
      signerOf(who),
      'demo',
      serializeIndex(index),
      previous,
      nowMs,
    );
    previous = signed.signature;
    await store.put(INDEX_KEY, signed.text);
    return signed.text;
  }

  /** Runs a pass that must be refused; returns its message. */
  async function refusedPass(): Promise<string> {
    const err = await reconciler.reconcileOnce().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DegradedPassError);
    return (err as DegradedPassError).message;
  }

  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-trust-'));
    store = new InMemoryObjectStore();
    trustList = new FakeTrustList();
    logged = [];
    previous = undefined;
    nowMs = Date.parse('2026-01-02T00:00:00Z');
    clockMs = Date.parse('2026-01-02T03:04:05Z');
    reconciler = newReconciler();
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('verifies nothing while the cluster has no trust list', async () => {
    await store.put(INDEX_KEY, serializeIndex(await entriesFor({ web: 'hello:v1' })));
    await expect(reconciler.reconcileOnce()).resolves.toMatchObject({ status: 'published' });
    expect(Object.keys(nodeFiles())).toContain('etc/podmin/manifests/web.yaml');
    expect(trustList.reads).toEqual([TRUST_LIST]);
    expect(fs.existsSync(generationFile())).toBe(false);
  });

  it('applies a trusted index and keeps its generation on disk', async () => {
    trustList.trust(alice);
    await commitSigned(await entriesFor({ web: 'hello:v1' }));
    await expect(reconciler.reconcileOnce()).resolves.toMatchObject({ status: 'published' });
    expect(fs.readFileSync(generationFile(), 'utf8')).toBe(`${previous?.generation}\n`);
    expect(reconciler.applied().error).toBeNull();
    // An unchanged index is not verified again: no trust-list read.
    trustList.reads.length = 0;
    await expect(reconciler.reconcileOnce()).resolves.toEqual({ status: 'unchanged' });
    expect(trustList.reads).toEqual([]);
  });

  it('refuses every attack, keeping its files, and recovers on the next trusted index', async () => {
    trustList.trust(alice, bob);
    const entries = await entriesFor({ web: 'hello:v1' });
    const first = await commitSigned(entries);
    await reconciler.reconcileOnce();
    const before = nodeFiles();
    const appliedBefore = reconciler.applied();
    const evil = await entriesFor({ evil: 'evil:v1' });

    const attacks: Array<[string, () => Promise<void>, RegExp]> = [
      [
        'an entry pointed at another payload',
        () =>
          store
            .put(INDEX_KEY, first.replace(entries['workers/web']!.pod, evil['workers/evil']!.pod))
            .then(() => undefined),
        /signature by "alice" does not match this index/,
      ],
      [
        'an entry added by hand',
        () =>
          store
            .put(
              INDEX_KEY,
              first.replace(
                '{\n',
                `{\n  "workers/evil": {\n    "pod": "${evil['workers/evil']!.pod}"\n  },\n`,
              ),
            )
            .then(() => undefined),
        /signature by "alice" does not match this index/,
      ],
      [
        'an unsigned index',
        () => store.put(INDEX_KEY, serializeIndex({ ...entries, ...evil })).then(() => undefined),
        /the index is unsigned, and this cluster runs only what a trusted deployer signed \(alice, bob\)/,
      ],
      [
        'an index signed by a key that is not trusted',
        async () => {
          const mallory = { name: 'mallory', ...generateSigningKey() };
          await commitSigned({ ...entries, ...evil }, mallory);
        },
        /signed by "mallory", who is not a trusted deployer/,
      ],
    ];
    for (const [attack, write, reason] of attacks) {
      await write();
      const message = await refusedPass();
      expect({ attack, message }).toEqual({
        attack,
        message: expect.stringMatching(/^untrusted desired state: /) as string,
      });
      expect(message).toMatch(reason);
      expect(nodeFiles()).toEqual(before);
      expect(reconciler.applied()).toEqual({ ...appliedBefore, error: message });
      expect(reconciler.status()).toMatchObject({ healthy: false, lastError: message });
    }

    await commitSigned({ ...entries, ...(await entriesFor({ api: 'hello:v2' })) });
    await expect(reconciler.reconcileOnce()).resolves.toMatchObject({ status: 'published' });
    expect(Object.keys(nodeFiles())).toEqual(
      expect.arrayContaining(['etc/podmin/manifests/web.yaml', 'etc/podmin/manifests/api.yaml']),
    );
    expect(Object.keys(nodeFiles())).not.toContain('etc/podmin/manifests/evil.yaml');
    expect(reconciler.applied().error).toBeNull();
  });

  it('refuses an older signed index written back, also after the agent restarts', async () => {
    trustList.trust(alice);
    const old = await commitSigned(await entriesFor({ web: 'hello:v1' }));
    await reconciler.reconcileOnce();
    await commitSigned(await entriesFor({ web: 'hello:v2' }));
    await reconciler.reconcileOnce();
    const before = nodeFiles();
    const generation = previous?.generation;
    expect(fs.readFileSync(generationFile(), 'utf8')).toBe(`${generation}\n`);

    await store.put(INDEX_KEY, old);
    expect(await refusedPass()).toMatch(
      new RegExp(
        `older than generation ${generation} this node applied \\(an old index written back\\)`,
      ),
    );
    expect(nodeFiles()).toEqual(before);

    // A new process on the same node reads the generation back: still refused.
    reconciler = newReconciler();
    expect(await refusedPass()).toMatch(/an old index written back/);
    expect(nodeFiles()).toEqual(before);
  });

  it('re-verifies a refused index every poll, reading conditionally, and logs its cause once', async () => {
    trustList.trust(alice);
    await commitSigned(await entriesFor({ web: 'hello:v1' }));
    await reconciler.reconcileOnce();
    await commitSigned(await entriesFor({ web: 'hello:v2' }), bob);
    const refusedEtag = store.objects.get(INDEX_KEY)!.etag;
    const message = await refusedPass();
    store.calls.length = 0;
    trustList.reads.length = 0;
    expect(await refusedPass()).toBe(message);
    expect(store.calls).toEqual([`getIfChanged ${INDEX_KEY}`]);
    expect(trustList.reads).toEqual([TRUST_LIST]);
    expect(reconciler.status().indexEtag).not.toBe(refusedEtag);
    expect(logged.filter((l) => l.message === 'refuse desired state')).toEqual([
      {
        message: 'refuse desired state',
        fields: expect.objectContaining({
          error: message,
          indexEtag: refusedEtag,
          signer: 'bob',
        }) as Record<string, unknown>,
      },
    ]);

    // Trusting bob makes the same index trusted at the next poll.
    trustList.trust(alice, bob);
    await expect(reconciler.reconcileOnce()).resolves.toMatchObject({ status: 'published' });
    expect(fs.readFileSync(path.join(paths().manifests, 'web.yaml'), 'utf8')).toContain('hello:v2');
    expect(reconciler.status().indexEtag).toBe(refusedEtag);
    expect(logged.map((l) => l.message)).toEqual(['refuse desired state', 'trust desired state']);
  });

  it('keeps everything while the trust list cannot be read, and retries at each poll', async () => {
    trustList.trust(alice);
    await commitSigned(await entriesFor({ web: 'hello:v1' }));
    await reconciler.reconcileOnce();
    // A list read moments ago stands in for one that cannot be read (a throttled burst after a
    // deploy), and the node says so.
    await commitSigned(await entriesFor({ web: 'hello:v2' }));
    trustList.failure = new PodminError(
      'SERVICE_UNAVAILABLE',
      'reading /demo/_system/deployers: timeout',
    );
    clockMs += TRUST_LIST_FALLBACK_MS;
    await expect(reconciler.reconcileOnce()).resolves.toMatchObject({ status: 'published' });
    expect(fs.readFileSync(path.join(paths().manifests, 'web.yaml'), 'utf8')).toContain('hello:v2');
    expect(logged.map((l) => l.message)).toContain(
      'trust desired state with the last trust list read',
    );
    // Older than that, it does not: nothing is trusted, everything is kept.
    const before = nodeFiles();
    await commitSigned(await entriesFor({ web: 'hello:v3' }));
    clockMs += 1000;
    const message = await refusedPass();
    expect(message).toBe(
      `untrusted desired state: cannot read the trust list: reading ${TRUST_LIST}: timeout`,
    );
    expect(nodeFiles()).toEqual(before);
    trustList.failure = undefined;
    await expect(reconciler.reconcileOnce()).resolves.toMatchObject({ status: 'published' });
    expect(fs.readFileSync(path.join(paths().manifests, 'web.yaml'), 'utf8')).toContain('hello:v3');
  });

  it('refuses a malformed trust list, naming it, and a kept generation it cannot read', async () => {
    trustList.body = '{"version":1,"deployers":"alice"}';
    await commitSigned(await entriesFor({ web: 'hello:v1' }));
    expect(await refusedPass()).toMatch(
      /^untrusted desired state: cannot read the trust list: reading \/demo\/_system\/deployers.*deployers: must be a list/,
    );
    expect(nodeFiles()).toEqual({});

    trustList.trust(alice);
    fs.mkdirSync(paths().state, { recursive: true });
    fs.writeFileSync(generationFile(), 'twelve\n');
    expect(await refusedPass()).toMatch(/desired-generation does not hold a generation/);
    expect(nodeFiles()).toEqual({});
  });
});
