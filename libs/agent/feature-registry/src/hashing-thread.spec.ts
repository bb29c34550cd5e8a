import { randomBytes } from 'node:crypto';
import { sha256Digest, sha512Digest } from '@podmin/util-oci';
import { HashingThread } from './hashing-thread';

/** `bytes` copied into shared memory, which is all the hashing thread reads. */
function shared(bytes: Buffer): Uint8Array {
  const view = new Uint8Array(new SharedArrayBuffer(bytes.length));
  view.set(bytes);
  return view;
}

describe('HashingThread', () => {
  const hashing = new HashingThread();
  beforeAll(() => hashing.onModuleInit());
  afterAll(() => hashing.onApplicationShutdown());

  it('computes sha256 and sha512 digests of concurrent hashes fed in parts', async () => {
    const a = randomBytes(300_000);
    const b = randomBytes(70_000);
    const first = hashing.start('sha256');
    const second = hashing.start('sha512');
    await Promise.all([
      first.update(shared(a.subarray(0, 100_000))),
      second.update(shared(b)),
      first.update(shared(a.subarray(100_000))),
    ]);
    expect(await first.digest()).toBe(sha256Digest(a));
    expect(await second.digest()).toBe(sha512Digest(b));
  });

  it('refuses bytes outside shared memory', () => {
    const job = hashing.start('sha256');
    expect(() => job.update(Buffer.from('x'))).toThrow(TypeError);
    job.abandon();
  });

  it('fails the hashes in progress when stopped, and starts a new thread on next use', async () => {
    const own = new HashingThread();
    const job = own.start('sha256');
    await own.onApplicationShutdown();
    await expect(job.digest()).rejects.toThrow('stopped');
    const next = own.start('sha256');
    await next.update(shared(Buffer.from('abc')));
    expect(await next.digest()).toBe(sha256Digest('abc'));
    await own.onApplicationShutdown();
  });
});
