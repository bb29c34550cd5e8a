import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { bundleForNode, makeTempDir } from '@podmin/testing';
import type { TempDir } from '@podmin/testing';
import { md5Etag } from './etag';
import { LOCAL_LOCK_DIR, LocalDirectoryObjectStore } from './local-directory-object-store';
import { describeObjectStoreContract, expectCode } from './object-store.contract';

describeObjectStoreContract('LocalDirectoryObjectStore on a temp dir', async () => {
  const dir = await makeTempDir('podmin-local-store-contract');
  return { store: new LocalDirectoryObjectStore(dir.path), cleanup: dir.cleanup };
});

describe('LocalDirectoryObjectStore on disk', () => {
  let dir: TempDir;
  let store: LocalDirectoryObjectStore;

  beforeEach(async () => {
    dir = await makeTempDir('podmin-local-store');
    store = new LocalDirectoryObjectStore(dir.path, { lockTimeoutMs: 2000, staleLockMs: 30_000 });
  });

  afterEach(async () => {
    await dir.cleanup();
  });

  it('takes the server time from the mtime the kernel gave the file it just wrote', async () => {
    // This store's clock runs 60 s behind the kernel's, as under libfaketime.
    const skewed = new LocalDirectoryObjectStore(dir.path, { now: () => Date.now() - 60_000 });
    expect(skewed.lastServerTime()).toBeUndefined();
    await skewed.putIfAbsent('dns/leader.json', '{"a":1}');
    const created = skewed.lastServerTime();
    const file = path.join(dir.path, 'dns', 'leader.json');
    expect(created?.serverMs).toBe((await stat(file)).mtimeMs);
    expect((created?.localMs ?? 0) - (created?.serverMs ?? 0)).toBeCloseTo(-60_000, -3);
    await skewed.putIfMatch('dns/leader.json', '{"a":2}', md5Etag('{"a":1}'));
    const replaced = skewed.lastServerTime();
    expect(replaced).not.toBe(created);
    expect(replaced?.serverMs).toBe((await stat(file)).mtimeMs);
    // Reads stamp no file: they leave the sample as it was.
    await skewed.get('dns/leader.json');
    expect(skewed.lastServerTime()).toBe(replaced);
  });

  it('keeps each object as the plain file at its key path', async () => {
    await store.putIfAbsent('deployments/index.json', '{"generation":1}');
    expect(await readFile(path.join(dir.path, 'deployments', 'index.json'), 'utf8')).toBe(
      '{"generation":1}',
    );
    expect(await readdir(path.join(dir.path, 'deployments'))).toEqual(['index.json']);
  });

  it('computes ETags from content, also for files changed by other tools', async () => {
    await store.put('edited.txt', 'before');
    await writeFile(path.join(dir.path, 'edited.txt'), 'after, edited by hand');
    const head = await store.head('edited.txt');
    expect(head.etag).toBe(md5Etag('after, edited by hand'));
    expect((await store.get('edited.txt')).etag).toBe(head.etag);
  });

  it('reports a missing bucket directory as BUCKET_UNAVAILABLE', async () => {
    const gone = new LocalDirectoryObjectStore(path.join(dir.path, 'no-such-bucket'));
    await expectCode(gone.get('k'), 'BUCKET_UNAVAILABLE');
    await expectCode(gone.putIfAbsent('k', 'v'), 'BUCKET_UNAVAILABLE');
    await expectCode(gone.put('k', 'v'), 'BUCKET_UNAVAILABLE');
    await expectCode(gone.delete('k'), 'BUCKET_UNAVAILABLE');
    await expectCode(gone.list(''), 'BUCKET_UNAVAILABLE');
    expect(existsSync(path.join(dir.path, 'no-such-bucket'))).toBe(false);
  });

  it('rejects keys using the reserved temp and lock names', async () => {
    await expectCode(store.put('.podmin-tmp-abc', 'x'), 'INVALID_ARGUMENT');
    await expectCode(store.put('a/.podmin-tmp-abc/b', 'x'), 'INVALID_ARGUMENT');
    await expectCode(store.put(`${LOCAL_LOCK_DIR}/x`, 'x'), 'INVALID_ARGUMENT');
  });

  it('leaves no temp files behind and never lists temp or lock files', async () => {
    await store.putIfAbsent('a/one', '1');
    await expectCode(store.putIfAbsent('a/one', '2'), 'PRECONDITION_FAILED');
    await store.putIfMatch('a/one', '3', md5Etag('1'));
    await expectCode(store.putIfMatch('a/one', '4', md5Etag('1')), 'PRECONDITION_FAILED');
    await writeFile(path.join(dir.path, 'a', '.podmin-tmp-left-by-a-crash'), 'partial');
    expect(await readdir(path.join(dir.path, 'a'))).toEqual(['.podmin-tmp-left-by-a-crash', 'one']);
    expect(existsSync(path.join(dir.path, LOCAL_LOCK_DIR))).toBe(true);
    expect((await store.list('')).objects.map((o) => o.key)).toEqual(['a/one']);
  });

  it('reports a key that collides with another key path as INVALID_ARGUMENT', async () => {
    await store.put('a/b', 'x');
    await expectCode(store.put('a', 'y'), 'INVALID_ARGUMENT');
    await expectCode(store.putIfAbsent('a', 'y'), 'INVALID_ARGUMENT');
    await expectCode(store.put('a/b/c', 'z'), 'INVALID_ARGUMENT');
    await expectCode(store.get('a'), 'OBJECT_NOT_FOUND');
    await expect(store.delete('a')).resolves.toBeUndefined();
    expect((await store.get('a/b')).body.toString()).toBe('x');
  });

  it('reports an empty directory standing at a key as unavailable to whole-object reads', async () => {
    // No bucket operation leaves an empty directory: someone replaced the object by hand.
    await mkdir(path.join(dir.path, 'deployments', 'index.json'), { recursive: true });
    await expectCode(store.get('deployments/index.json'), 'BUCKET_UNAVAILABLE');
    await expectCode(store.getIfChanged('deployments/index.json', '"x"'), 'BUCKET_UNAVAILABLE');
    await expect(store.get('deployments/index.json')).rejects.toThrow(/is an empty directory/);
    // Metadata and listing still see no object there.
    await expectCode(store.head('deployments/index.json'), 'OBJECT_NOT_FOUND');
    expect((await store.list('deployments/')).objects).toEqual([]);
  });

  it('removes directories emptied by delete', async () => {
    await store.put('x/y/z/object', '1');
    await store.put('x/keep', '2');
    await store.delete('x/y/z/object');
    expect(existsSync(path.join(dir.path, 'x', 'y'))).toBe(false);
    expect(existsSync(path.join(dir.path, 'x', 'keep'))).toBe(true);
    await store.put('x/y/z/object', '3');
    expect((await store.get('x/y/z/object')).body.toString()).toBe('3');
  });

  it('breaks a lock whose holder process is gone', async () => {
    const etag = await store.put('locked', 'v1');
    // Above Linux's largest pid_max, so no such process can exist.
    await writeLock(dir.path, 'locked', {
      pid: 4_194_305,
      host: (await import('node:os')).hostname(),
      token: 'dead',
    });
    await expect(store.putIfMatch('locked', 'v2', etag)).resolves.toBe(md5Etag('v2'));
  });

  it('breaks a lock older than the stale limit even if its holder lives', async () => {
    const etag = await store.put('locked', 'v1');
    const lockPath = await writeLock(dir.path, 'locked', {
      pid: process.pid,
      host: 'elsewhere',
      token: 'old',
    });
    const minuteAgo = new Date(Date.now() - 60_000);
    await utimes(lockPath, minuteAgo, minuteAgo);
    await expect(store.putIfMatch('locked', 'v2', etag)).resolves.toBe(md5Etag('v2'));
  });

  it('gives up with BUCKET_UNAVAILABLE while a live holder keeps the lock', async () => {
    const impatient = new LocalDirectoryObjectStore(dir.path, { lockTimeoutMs: 200 });
    const etag = await impatient.put('locked', 'v1');
    const lockPath = await writeLock(dir.path, 'locked', {
      pid: process.pid,
      host: 'elsewhere',
      token: 'live',
    });
    const started = Date.now();
    await expectCode(impatient.putIfMatch('locked', 'v2', etag), 'BUCKET_UNAVAILABLE');
    expect(Date.now() - started).toBeLessThan(5000);
    await rm(lockPath);
    await expect(impatient.putIfMatch('locked', 'v2', etag)).resolves.toBe(md5Etag('v2'));
  });
});

describe('LocalDirectoryObjectStore across processes', () => {
  let work: TempDir;
  let bundle: string;

  beforeAll(async () => {
    work = await makeTempDir('podmin-local-store-race');
    bundle = path.join(work.path, 'object-store.cjs');
    // The children load the library as one bundle of its index.
    bundleForNode(path.join(__dirname, 'index.ts'), bundle);
  }, 60_000);

  afterAll(async () => {
    await work.cleanup();
  });

  it('never loses an update when separate processes race with putIfMatch', async () => {
    const bucket = path.join(work.path, 'bucket');
    await mkdir(bucket);
    const store = new LocalDirectoryObjectStore(bucket);
    await store.putIfAbsent('deployments/index.json', JSON.stringify({ n: 0 }));
    const children = 8;
    const incrementsEach = 10;
    const fixture = path.join(__dirname, '__fixtures__', 'counter-race-child.cjs');
    const results = await Promise.all(
      Array.from({ length: children }, () =>
        runNode([fixture, bundle, bucket, 'deployments/index.json', String(incrementsEach)]),
      ),
    );
    const conflicts = results.map((out) => (JSON.parse(out) as { conflicts: number }).conflicts);
    const final = JSON.parse((await store.get('deployments/index.json')).body.toString()) as {
      n: number;
    };
    expect(final.n).toBe(children * incrementsEach);
    expect(conflicts).toHaveLength(children);
    expect((await readdir(path.join(bucket, 'deployments'))).sort()).toEqual(['index.json']);
  }, 120_000);
});

async function writeLock(
  root: string,
  key: string,
  record: { pid: number; host: string; token: string },
): Promise<string> {
  const lockDir = path.join(root, LOCAL_LOCK_DIR);
  await mkdir(lockDir, { recursive: true });
  const lockPath = path.join(lockDir, createHash('sha256').update(key).digest('hex'));
  await writeFile(lockPath, JSON.stringify(record));
  return lockPath;
}

function runNode(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code === 0) {
        resolve(stdout);
      } else {
        reject(new Error(`child exited with ${code}: ${stderr}`));
      }
    });
  });
}
