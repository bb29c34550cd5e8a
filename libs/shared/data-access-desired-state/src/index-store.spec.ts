import { createHash } from 'node:crypto';
import {
  attachSignature,
  INDEX_KEY,
  podPayloadKey,
  serializeIndex,
  type IndexSignature,
} from '@podmin/util-desired-state';
import type { ConditionalGetResult, StoredObject } from './desired-state.port';
import { readIndex, readIndexIfChanged } from './index-store';

/** One-object store fake: the index as last put, with an MD5 ETag. */
class IndexOnlyStore {
  private object: StoredObject | undefined;
  put(key: string, body: string): Promise<string> {
    const etag = `"${createHash('md5').update(body).digest('hex')}"`;
    this.object = { body: Buffer.from(body), etag };
    return Promise.resolve(etag);
  }
  get(): Promise<StoredObject> {
    return this.object ? Promise.resolve(this.object) : Promise.reject(new Error('absent'));
  }
  getIfChanged(_key: string, etag: string): Promise<ConditionalGetResult> {
    const object = this.object;
    if (object === undefined) return Promise.reject(new Error('absent'));
    return Promise.resolve(
      object.etag === etag ? { status: 'unchanged', etag } : { status: 'changed', ...object },
    );
  }
}

const entries = { 'workers/web': { pod: podPayloadKey('workers', 'kind: Pod\n') } };
const signature: IndexSignature = {
  algorithm: 'ed25519',
  generation: 1767225600000,
  signer: 'alice',
  value: Buffer.alloc(64, 7).toString('base64'),
};

describe('index reads carry the signature', () => {
  it('returns the signature of a signed index beside its entries, on both reads', async () => {
    const store = new IndexOnlyStore();
    const etag = await store.put(INDEX_KEY, attachSignature(serializeIndex(entries), signature));
    const expected = { status: 'present', index: entries, etag, signature };
    expect(await readIndex(store)).toEqual(expected);
    expect(await readIndexIfChanged(store, '"older"')).toEqual(expected);
  });

  it('leaves the signature out of an unsigned index read, as before', async () => {
    const store = new IndexOnlyStore();
    const etag = await store.put(INDEX_KEY, serializeIndex(entries));
    const read = await readIndex(store);
    expect(read).toEqual({ status: 'present', index: entries, etag });
    expect(Object.keys(read)).toEqual(['status', 'index', 'etag']);
  });
});
