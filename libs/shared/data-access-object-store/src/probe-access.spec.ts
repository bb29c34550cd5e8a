import { PodminError } from '@podmin/util-errors';
import type { ObjectStore, StoredObject } from './object-store.port';
import { probeStoreAccess } from './probe-access';

/** An in-memory ObjectStore whose chosen operations fail with the given error. */
class FailingStore implements Pick<ObjectStore, 'putIfAbsent' | 'get' | 'delete'> {
  readonly objects = new Map<string, Buffer>();

  constructor(
    private readonly failures: Partial<Record<'putIfAbsent' | 'get' | 'delete', PodminError>> = {},
  ) {}

  putIfAbsent(key: string, body: Buffer | string): Promise<string> {
    if (this.failures.putIfAbsent) return Promise.reject(this.failures.putIfAbsent);
    this.objects.set(key, Buffer.from(body));
    return Promise.resolve('"etag"');
  }

  get(key: string): Promise<StoredObject> {
    if (this.failures.get) return Promise.reject(this.failures.get);
    const body = this.objects.get(key);
    return body === undefined
      ? Promise.reject(new PodminError('OBJECT_NOT_FOUND', 'missing'))
      : Promise.resolve({ body, etag: '"etag"' });
  }

  delete(key: string): Promise<void> {
    if (this.failures.delete) return Promise.reject(this.failures.delete);
    this.objects.delete(key);
    return Promise.resolve();
  }
}

const denied = new PodminError('ACCESS_DENIED', 'denied');
const down = new PodminError('BUCKET_UNAVAILABLE', 'down');

async function probe(store: FailingStore): Promise<unknown> {
  return probeStoreAccess(store as unknown as ObjectStore, 'bucket-x', () => 'id1').catch(
    (e: unknown) => e,
  );
}

describe('probeStoreAccess', () => {
  it('writes, reads back and deletes one probe object', async () => {
    const store = new FailingStore();
    await expect(probe(store)).resolves.toBeUndefined();
    expect(store.objects.size).toBe(0);
  });

  it.each([
    ['putIfAbsent', 'write', denied, 'ACCESS_DENIED'],
    ['get', 'read', denied, 'ACCESS_DENIED'],
    ['delete', 'delete', denied, 'ACCESS_DENIED'],
    ['get', 'read', down, 'BUCKET_UNAVAILABLE'],
    [
      'putIfAbsent',
      'write',
      new PodminError('PRECONDITION_FAILED', 'exists'),
      'BUCKET_UNAVAILABLE',
    ],
  ] as const)('names the step when %s fails', async (operation, step, failure, code) => {
    const store = new FailingStore({ [operation]: failure });
    const err = await probe(store);
    expect(err).toMatchObject({ code, cause: failure });
    expect((err as Error).message).toBe(
      `checking ${step} access to bucket-x with probe object .podmin-probe/id1: ${failure.message}`,
    );
    if (operation === 'get') {
      expect(store.objects.size).toBe(0); // cleaned up after a failed read
    }
  });
});
