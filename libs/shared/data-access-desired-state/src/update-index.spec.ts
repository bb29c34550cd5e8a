import { createHash } from 'node:crypto';
import { PodminError } from '@podmin/util-errors';
import {
  INDEX_KEY,
  SIGNATURE_MEMBER,
  attachSignature,
  parseSignedIndex,
  podPayloadKey,
  serializeIndex,
  splitSignature,
  withDeployment,
  type DesiredIndex,
  type IndexSignature,
} from '@podmin/util-desired-state';
import {
  generateSigningKey,
  localSigner,
  publicKeyOfPrivate,
  verifyIndexSignature,
  type DeployersDoc,
  type IndexVerdict,
} from '@podmin/util-trust';
import type { StoredObject } from './desired-state.port';
import { updateIndex, updateIndexEntry, type IndexSigning } from './update-index';

/** Map-backed index store recording its calls; `beforeWrite` lets a test race a writer. */
class FakeStore {
  readonly objects = new Map<string, { body: Buffer; etag: string }>();
  readonly calls: string[] = [];
  beforeWrite: (() => void) | undefined;

  set(key: string, body: string | Buffer): string {
    const bytes = Buffer.from(body);
    const etag = `"${createHash('md5').update(bytes).digest('hex')}"`;
    this.objects.set(key, { body: bytes, etag });
    return etag;
  }
  text(): string | undefined {
    return this.objects.get(INDEX_KEY)?.body.toString('utf8');
  }
  get(key: string): Promise<StoredObject> {
    this.calls.push('get');
    const object = this.objects.get(key);
    if (!object) return Promise.reject(new PodminError('OBJECT_NOT_FOUND', `${key}: absent`));
    return Promise.resolve({ body: Buffer.from(object.body), etag: object.etag });
  }
  putIfAbsent(key: string, body: string | Buffer): Promise<string> {
    this.calls.push('putIfAbsent');
    this.beforeWrite?.();
    if (this.objects.has(key))
      return Promise.reject(new PodminError('PRECONDITION_FAILED', `${key}: exists`));
    return Promise.resolve(this.set(key, body));
  }
  putIfMatch(key: string, body: string | Buffer, etag: string): Promise<string> {
    this.calls.push('putIfMatch');
    this.beforeWrite?.();
    if (this.objects.get(key)?.etag !== etag)
      return Promise.reject(new PodminError('PRECONDITION_FAILED', `${key}: changed`));
    return Promise.resolve(this.set(key, body));
  }
}

const CLUSTER = 'demo';
const noWait = () => Promise.resolve();
const key = (name: string): string => `workers/${name}`;
const entry = (text: string) => ({ pod: podPayloadKey('workers', text) });

/** A local Ed25519 deployer: its signing options and the trust list naming it. */
function deployer(name: string): { signing: IndexSigning; trust: DeployersDoc } {
  const { privatePem } = generateSigningKey();
  const info = publicKeyOfPrivate(privatePem, 'key');
  return {
    signing: { signer: localSigner(name, privatePem, 'key'), cluster: CLUSTER },
    trust: {
      version: 1,
      deployers: [{ name, algorithm: info.algorithm, publicKey: info.pem, added: '2026-12-01' }],
    },
  };
}
const alice = deployer('alice');
const bob = deployer('bob');

/** What a node concludes about the stored index text. */
function verdict(text: string | undefined, trust: DeployersDoc = alice.trust): IndexVerdict {
  const { index, signature } = parseSignedIndex(text ?? '');
  return verifyIndexSignature({
    cluster: CLUSTER,
    entriesText: serializeIndex(index),
    signature,
    deployers: trust,
  });
}

function signatureOf(text: string | undefined): IndexSignature | undefined {
  return parseSignedIndex(text ?? '').signature;
}

describe('signed index writes', () => {
  it('signs a new index, and an entry added to it, as the write after the last', async () => {
    const store = new FakeStore();
    const first = await updateIndexEntry(store, key('a'), entry('a'), alice);
    expect(first).toMatchObject({ changed: true, attempts: 1 });
    expect(store.calls).toEqual(['get', 'putIfAbsent']);
    expect(first.signature).toEqual(signatureOf(store.text()));
    expect(splitSignature(store.text() ?? '')?.entriesText).toBe(
      serializeIndex({ [key('a')]: entry('a') }),
    );
    expect(verdict(store.text())).toMatchObject({ trusted: true, signer: 'alice' });

    const second = await updateIndexEntry(store, key('b'), entry('b'), alice);
    expect(second.signature?.generation).toBeGreaterThan(first.signature?.generation ?? Infinity);
    expect(parseSignedIndex(store.text() ?? '').index).toEqual({
      [key('a')]: entry('a'),
      [key('b')]: entry('b'),
    });
    expect(verdict(store.text())).toMatchObject({ trusted: true });
  });

  it('writes nothing when nothing changes, signed or not', async () => {
    const store = new FakeStore();
    await updateIndexEntry(store, key('a'), entry('a'), alice);
    const before = store.text();
    store.calls.length = 0;
    expect(await updateIndexEntry(store, key('a'), entry('a'), bob)).toEqual({
      changed: false,
      attempts: 1,
      previous: entry('a'),
    });
    expect(await updateIndexEntry(store, key('gone'), null, alice)).toEqual({
      changed: false,
      attempts: 1,
    });
    expect(await updateIndex(store, () => undefined, alice)).toEqual({
      changed: false,
      attempts: 1,
    });
    expect(store.calls).toEqual(['get', 'get', 'get']);
    expect(store.text()).toBe(before);
  });

  it('hands updateIndex the entries without the signature, and signs what it returns', async () => {
    const store = new FakeStore();
    await updateIndexEntry(store, key('a'), entry('a'), alice);
    let seen: DesiredIndex | undefined;
    const result = await updateIndex(
      store,
      (index) => {
        seen = index;
        return withDeployment(index, key('b'), entry('b'));
      },
      bob,
    );
    expect(seen).toEqual({ [key('a')]: entry('a') });
    expect(result.signature?.signer).toBe('bob');
    expect(verdict(store.text(), bob.trust)).toMatchObject({ trusted: true, signer: 'bob' });
    expect(verdict(store.text())).toMatchObject({ trusted: false });
  });

  it('removes the last entry to an empty signed index, and drops the signature unsigned', async () => {
    const store = new FakeStore();
    await updateIndexEntry(store, key('a'), entry('a'), alice);
    await updateIndexEntry(store, key('a'), null, alice);
    expect(splitSignature(store.text() ?? '')).toMatchObject({ entriesText: '{}\n' });
    expect(verdict(store.text())).toMatchObject({ trusted: true });

    await updateIndexEntry(store, key('b'), entry('b'));
    expect(store.text()).toBe(serializeIndex({ [key('b')]: entry('b') }));
    expect(store.text()).not.toContain(SIGNATURE_MEMBER);
    expect(verdict(store.text())).toMatchObject({ trusted: false });
  });

  it('re-reads, re-applies and re-signs after a competing signed writer', async () => {
    const store = new FakeStore();
    await updateIndexEntry(store, key('a'), entry('a'), alice);
    // The racer's generation is far ahead of the clock: ours must outgrow it, not the clock.
    const racer: IndexSignature = {
      algorithm: 'ed25519',
      generation: Date.now() + 10 ** 9,
      signer: 'bob',
      value: Buffer.alloc(64, 1).toString('base64'),
    };
    let raced = false;
    store.beforeWrite = () => {
      if (raced) return;
      raced = true;
      const racing = serializeIndex({ [key('a')]: entry('a'), [key('r')]: entry('r') });
      store.set(INDEX_KEY, attachSignature(racing, racer));
    };
    const result = await updateIndexEntry(store, key('b'), entry('b'), {
      ...alice,
      backoff: noWait,
    });
    expect(result).toMatchObject({ changed: true, attempts: 2 });
    expect(result.signature?.generation).toBe(racer.generation + 1);
    expect(parseSignedIndex(store.text() ?? '').index).toEqual({
      [key('a')]: entry('a'),
      [key('b')]: entry('b'),
      [key('r')]: entry('r'),
    });
    expect(verdict(store.text())).toMatchObject({
      trusted: true,
      generation: racer.generation + 1,
    });
  });

  it('edits an index whose signature or entries are not in writer form, writing canonical text', async () => {
    const old: IndexSignature = {
      algorithm: 'ed25519',
      generation: Date.now() + 10 ** 9,
      signer: 'bob',
      value: Buffer.alloc(64, 2).toString('base64'),
    };
    const layouts = [
      // Another tool's compact JSON, member and all.
      JSON.stringify({ [key('a')]: entry('a'), [SIGNATURE_MEMBER]: old }),
      // Entries in another formatting, the member as writers put it.
      attachSignature(serializeIndex({ [key('a')]: entry('a') }), old).replace(
        /\n {4}"pod"/,
        '\n      "pod"',
      ),
    ];
    for (const layout of layouts) {
      const store = new FakeStore();
      store.set(INDEX_KEY, layout);
      const result = await updateIndexEntry(store, key('b'), entry('b'), alice);
      expect(result.signature?.generation).toBe(old.generation + 1);
      expect(splitSignature(store.text() ?? '')?.entriesText).toBe(
        serializeIndex({ [key('a')]: entry('a'), [key('b')]: entry('b') }),
      );
      expect(verdict(store.text())).toMatchObject({ trusted: true });
    }
  });

  it('refuses a malformed or duplicated signature member, naming it, and writes nothing', async () => {
    const signed = attachSignature(serializeIndex({ [key('a')]: entry('a') }), {
      algorithm: 'ed25519',
      generation: 5,
      signer: 'bob',
      value: Buffer.alloc(64, 3).toString('base64'),
    });
    const malformed = signed.replace('"generation":5', '"generation":-5');
    const duplicated = signed.replace(
      `\n  "${SIGNATURE_MEMBER}"`,
      `\n  "${SIGNATURE_MEMBER}": {},\n  "${SIGNATURE_MEMBER}"`,
    );
    for (const [text, message] of [
      [malformed, `${SIGNATURE_MEMBER}.generation`],
      [duplicated, 'duplicate'],
    ] as const) {
      const store = new FakeStore();
      store.set(INDEX_KEY, text);
      await expect(updateIndexEntry(store, key('b'), entry('b'), alice)).rejects.toThrow(message);
      expect(store.calls).toEqual(['get']);
      expect(store.text()).toBe(text);
    }
  });

  it('writes nothing when signing fails', async () => {
    const store = new FakeStore();
    const broken: IndexSigning = {
      cluster: CLUSTER,
      signer: {
        signer: 'kms',
        algorithm: 'ecdsa-p256-sha256',
        sign: () => Promise.reject(new PodminError('ACCESS_DENIED', 'kms:Sign denied')),
      },
    };
    await expect(
      updateIndexEntry(store, key('a'), entry('a'), { signing: broken }),
    ).rejects.toMatchObject({ code: 'ACCESS_DENIED' });
    expect(store.calls).toEqual(['get']);
  });
});
