import { updateIndexEntry, type IndexSigning } from '@podmin/data-access-desired-state';
import { S3ObjectStore, createS3Client } from '@podmin/data-access-object-store';
import { daemonSetManifest, emulatorBucket } from '@podmin/testing';
import {
  INDEX_KEY,
  SIGNATURE_MEMBER,
  editCanonicalIndex,
  parseSignedIndex,
  podPayloadKey,
  serializeIndex,
  splitSignature,
  type DesiredIndex,
  type IndexSignature,
} from '@podmin/util-desired-state';
import { buildDeployment } from '@podmin/util-manifest';
import {
  generateSigningKey,
  localSigner,
  publicKeyOfPrivate,
  verifyIndexSignature,
  type Deployer,
  type IndexVerdict,
} from '@podmin/util-trust';
import { commitDeployment, deleteDeployment, type CommitResult } from './commit';
import { deploymentPayloads } from './deploy';
import { listDeployments } from './list';
import { jitteredBackoff } from './desired-state.ports';
import { restartDeployment } from './restart';
import { recommitPrevious } from './rollout';
import { pauseRollout, resumeRollout } from './rollout-state';
import { readStatus } from './status';
import { rollbackDeployment } from './rollback';

// The data-access library's own specs cannot reach the emulator (@podmin/testing depends on
// it), so the signed compare-and-swap is tested here, through the commits that use it.

const CLUSTER = 'demo';

/** A local Ed25519 deployer: its signing options and its trust-list entry. */
function deployer(name: string): { signing: IndexSigning; trusted: Deployer } {
  const { privatePem } = generateSigningKey();
  const info = publicKeyOfPrivate(privatePem, 'key');
  return {
    signing: { signer: localSigner(name, privatePem, 'key'), cluster: CLUSTER },
    trusted: { name, algorithm: info.algorithm, publicKey: info.pem, added: '2026-12-01' },
  };
}
const alice = deployer('alice');
const ci = deployer('ci');

/** A DaemonSet's payloads as deploy commits them. */
function payloads(nodegroup: string, name: string, image: string) {
  return deploymentPayloads(
    buildDeployment(daemonSetManifest({ name, nodegroup, image }), { source: 'test' }),
  );
}

describe('signed commits on the S3 emulator', () => {
  let store: S3ObjectStore;
  let destroy: () => void;

  beforeAll(async () => {
    const { client, bucket } = await emulatorBucket('signed-commit', createS3Client);
    store = new S3ObjectStore({ client, bucket });
    destroy = () => client.destroy();
  });
  afterAll(() => destroy());

  async function stored(): Promise<string> {
    return (await store.get(INDEX_KEY)).body.toString('utf8');
  }

  /** A node's verdict on the stored index, read by the strict parse as nodes read it. */
  async function verdict(lastGeneration?: number): Promise<IndexVerdict> {
    const { index, signature } = parseSignedIndex(await stored());
    return verifyIndexSignature({
      cluster: CLUSTER,
      entriesText: serializeIndex(index),
      signature,
      deployers: { version: 1, deployers: [alice.trusted, ci.trusted] },
      ...(lastGeneration === undefined ? {} : { lastGeneration }),
    });
  }

  /** The generation of the signature a commit wrote, read back from the bucket. */
  async function generationAfter(commit: Promise<unknown>): Promise<number> {
    await commit;
    const { signature } = parseSignedIndex(await stored());
    if (signature === undefined) throw new Error('the index is not signed');
    return signature.generation;
  }

  it('signs deploy, rollback, restart, delete and a failed rollout’s recommit; every index verifies and generations grow', async () => {
    const generations: number[] = [];
    const deploy = (signing: IndexSigning, name: string, image: string): Promise<CommitResult> =>
      commitDeployment(store, payloads('edge', name, image), { signing });

    generations.push(await generationAfter(deploy(alice.signing, 'api', 'hello:v1')));
    expect(await verdict()).toMatchObject({ trusted: true, signer: 'alice' });

    // The stored signed text splits without a parse and its entries take the in-place edit.
    const split = splitSignature(await stored());
    expect(split?.signature?.signer).toBe('alice');
    expect(
      editCanonicalIndex(split?.entriesText ?? '', 'edge/db', {
        pod: podPayloadKey('edge', 'db'),
      }),
    ).toBeDefined();

    const steps: Array<() => Promise<unknown>> = [
      () => deploy(ci.signing, 'db', 'postgres:16'),
      () => deploy(alice.signing, 'api', 'hello:v2'),
      () =>
        rollbackDeployment(
          store,
          { nodegroup: 'edge', name: 'api' },
          { signing: ci.signing, pin: false },
        ),
      () => restartDeployment(store, { nodegroup: 'edge', name: 'db' }, { signing: alice.signing }),
      () => deleteDeployment(store, 'edge', 'db', { signing: ci.signing }),
      // deploy --wait --rollback-on-failure: the failed deploy, then putting back what it replaced.
      async () => {
        const failed = await deploy(ci.signing, 'api', 'hello:v3');
        generations.push(await generationAfter(Promise.resolve()));
        const recommit = recommitPrevious(store, () => undefined, { signing: alice.signing });
        expect(await recommit(failed.key, failed.entry, failed.previous)).toBe(true);
      },
    ];
    for (const step of steps) {
      generations.push(await generationAfter(step()));
      expect(await verdict(generations.at(-2))).toMatchObject({ trusted: true });
    }
    expect(generations.every((g, i) => i === 0 || g > (generations[i - 1] ?? Infinity))).toBe(true);
    expect(Object.keys(parseSignedIndex(await stored()).index)).toEqual(['edge/api']);
    // What the nodes applied last makes every earlier index a replay.
    expect(await verdict(Number.MAX_SAFE_INTEGER)).toMatchObject({ trusted: false });

    // The CLI's readers take the signed index as they take an unsigned one.
    const warnings: string[] = [];
    const rows = await listDeployments(store, (m) => warnings.push(m), CLUSTER);
    expect(rows.map((r) => `${r.nodegroup}/${r.name}`)).toEqual(['edge/api']);
    expect(warnings).toEqual([]);
    expect((await readStatus(store)).map((d) => d.name)).toEqual(['api']);
    expect((await pauseRollout(store, { nodegroup: 'edge', name: 'api' })).changed).toBe(true);
    expect((await resumeRollout(store, { nodegroup: 'edge', name: 'api' })).changed).toBe(true);

    // An unchanged deploy writes nothing, signed or not.
    const before = await store.get(INDEX_KEY);
    const again = await deploy(alice.signing, 'api', 'hello:v1');
    expect(again.changed).toBe(false);
    expect((await store.get(INDEX_KEY)).etag).toBe(before.etag);
  });

  it('loses nothing to 20 concurrent signed deploys, and the final index verifies', async () => {
    const before = parseSignedIndex(await stored());
    const signers = [alice.signing, ci.signing];
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        commitDeployment(store, payloads('race', `app-${i}`, `hello:${i}`), {
          signing: signers[i % 2] as IndexSigning,
          backoff: jitteredBackoff,
        }),
      ),
    );
    expect(results.every((r) => r.changed)).toBe(true);
    // Writers that lost a race re-read, re-applied and re-signed.
    expect(results.some((r) => r.attempts > 1)).toBe(true);
    const expected: DesiredIndex = {
      ...before.index,
      ...Object.fromEntries(results.map((r) => [r.key, r.entry])),
    };
    const after = parseSignedIndex(await stored());
    expect(after.index).toEqual(expected);
    expect(Object.keys(after.index)).toHaveLength(Object.keys(before.index).length + 20);
    expect(after.signature?.generation).toBeGreaterThan(
      (before.signature as IndexSignature).generation + 19,
    );
    expect(await verdict(before.signature?.generation)).toMatchObject({ trusted: true });
  });

  it('drops the signature when a writer without a signer edits a signed index', async () => {
    expect(await stored()).toContain(SIGNATURE_MEMBER);
    const result = await updateIndexEntry(store, 'edge/cache', {
      pod: podPayloadKey('edge', 'cache'),
    });
    expect(result.changed).toBe(true);
    expect(result.signature).toBeUndefined();
    const text = await stored();
    expect(text).not.toContain(SIGNATURE_MEMBER);
    expect(text).toBe(serializeIndex(parseSignedIndex(text).index));
    expect(await verdict()).toMatchObject({
      trusted: false,
      reason: expect.stringContaining('unsigned') as unknown,
    });
  });
});
