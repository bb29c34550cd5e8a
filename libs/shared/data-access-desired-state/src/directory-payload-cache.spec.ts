import { spawn } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildSync } from 'esbuild';
import { sha512Hex } from '@podmin/util-desired-state';
import { DirectoryPayloadCache } from './directory-payload-cache';

const payload = (name: string, size = 100): Buffer =>
  Buffer.from(`metadata:\n  name: ${name}\n#${'x'.repeat(Math.max(0, size - name.length - 20))}\n`);

describe('DirectoryPayloadCache', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'payload-cache-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps verified payloads by digest for the next process', async () => {
    const body = payload('web');
    const digest = sha512Hex(body);
    await new DirectoryPayloadCache({ dir }).put(digest, body);
    expect((await new DirectoryPayloadCache({ dir }).get(digest))?.equals(body)).toBe(true);
    expect(await new DirectoryPayloadCache({ dir }).get(sha512Hex('other'))).toBeUndefined();
    expect(((await stat(path.join(dir, digest))).mode & 0o777).toString(8)).toBe('600');
  });

  it('creates its directory once, and again when it was removed meanwhile', async () => {
    const cacheDir = path.join(dir, 'payloads', 'sha512');
    const cache = new DirectoryPayloadCache({ dir: cacheDir });
    const [a, b] = [payload('a'), payload('b')];
    await cache.put(sha512Hex(a), a);
    await rm(path.join(dir, 'payloads'), { recursive: true });
    await cache.put(sha512Hex(b), b);
    expect(await readdir(cacheDir)).toEqual([sha512Hex(b)]);
    expect(((await stat(cacheDir)).mode & 0o777).toString(8)).toBe('700');
  });

  it('answers misses after its 16th lookup from one listing, finding what is there or written since', async () => {
    const present = payload('present');
    await new DirectoryPayloadCache({ dir }).put(sha512Hex(present), present);
    const cache = new DirectoryPayloadCache({ dir });
    const other = new DirectoryPayloadCache({ dir });
    const early = payload('early');
    // Within the first 16 lookups each opens its file: another process's write is found.
    expect(await cache.get(sha512Hex(early))).toBeUndefined();
    await other.put(sha512Hex(early), early);
    expect((await cache.get(sha512Hex(early)))?.equals(early)).toBe(true);
    for (let i = 0; i < 20; i++) expect(await cache.get(sha512Hex(`absent-${i}`))).toBeUndefined();
    // Now the listing answers: what was there and this process's own writes are found, another
    // process's later write is a miss (no open of an absent file per lookup).
    expect((await cache.get(sha512Hex(present)))?.equals(present)).toBe(true);
    const mine = payload('mine');
    await cache.put(sha512Hex(mine), mine);
    expect((await cache.get(sha512Hex(mine)))?.equals(mine)).toBe(true);
    const theirs = payload('theirs');
    await other.put(sha512Hex(theirs), theirs);
    expect(await cache.get(sha512Hex(theirs))).toBeUndefined();
    // A directory that does not exist yet lists as empty.
    const fresh = new DirectoryPayloadCache({ dir: path.join(dir, 'none') });
    for (let i = 0; i < 20; i++) expect(await fresh.get(sha512Hex(`x-${i}`))).toBeUndefined();
  });

  it('never stores bytes that do not hash to the digest', async () => {
    const cache = new DirectoryPayloadCache({ dir });
    await expect(cache.put(sha512Hex('web'), Buffer.from('evil'))).rejects.toMatchObject({
      code: 'INTERNAL',
    });
    expect(await readdir(dir)).toEqual([]);
  });

  it('treats a file modified on disk as a miss and removes it', async () => {
    const body = payload('web');
    const digest = sha512Hex(body);
    const cache = new DirectoryPayloadCache({ dir });
    await cache.put(digest, body);
    await writeFile(path.join(dir, digest), 'metadata:\n  name: evil\n');
    expect(await cache.get(digest)).toBeUndefined();
    expect(await readdir(dir)).toEqual([]);
  });

  it('evicts the least recently used payloads past its size bound', async () => {
    const now = Date.now();
    const cache = new DirectoryPayloadCache({ dir, maxBytes: 1000, now: () => now });
    const bodies = Array.from({ length: 5 }, (_, i) => payload(`app-${i}`, 210));
    const size = bodies[0]!.length;
    expect(size * 4).toBeLessThanOrEqual(1000);
    expect(size * 5).toBeGreaterThan(1000);
    for (const [i, body] of bodies.slice(0, 4).entries()) {
      await cache.put(sha512Hex(body), body);
      // Written by earlier commands, oldest first.
      const at = new Date(now - (10 - i) * 3_600_000);
      await utimes(path.join(dir, sha512Hex(body)), at, at);
    }
    // A hit makes app-0 the most recently used of the four.
    expect(await cache.get(sha512Hex(bodies[0]!))).toBeDefined();
    await cache.put(sha512Hex(bodies[4]!), bodies[4]!);
    const left = await readdir(dir);
    expect(left.sort()).toEqual(
      [bodies[0]!, bodies[3]!, bodies[4]!].map((b) => sha512Hex(b)).sort(),
    );
  });

  it('stays consistent with writers in separate processes', async () => {
    // The real module, bundled, in six processes writing overlapping payloads at once with a
    // bound that forces them to evict each other's files while they write.
    const bundle = path.join(dir, 'cache.cjs');
    buildSync({
      entryPoints: [path.join(__dirname, 'directory-payload-cache.ts')],
      bundle: true,
      platform: 'node',
      format: 'cjs',
      outfile: bundle,
      tsconfig: path.join(__dirname, '../../../../tsconfig.base.json'),
      logLevel: 'error',
    });
    const cacheDir = path.join(dir, 'cache');
    const script = `
      const { DirectoryPayloadCache } = require(${JSON.stringify(bundle)});
      const { createHash } = require('node:crypto');
      const cache = new DirectoryPayloadCache({ dir: ${JSON.stringify(cacheDir)}, maxBytes: 40000 });
      (async () => {
        const writes = [];
        for (let i = 0; i < 120; i++) {
          const body = Buffer.from('metadata:\\n  name: app-' + (i % 80) + '\\n#' + 'x'.repeat(900) + '\\n');
          const digest = createHash('sha512').update(body).digest('hex');
          writes.push(cache.put(digest, body).then(() => cache.get(digest)).then((got) => {
            if (got !== undefined && !got.equals(body)) throw new Error('wrong bytes for ' + digest);
          }));
        }
        await Promise.all(writes);
      })().catch((err) => { console.error(err); process.exit(1); });
    `;
    const codes = await Promise.all(
      Array.from(
        { length: 6 },
        () =>
          new Promise<number | null>((resolve) => {
            const child = spawn(process.execPath, ['-e', script], { stdio: 'inherit' });
            child.on('close', resolve);
          }),
      ),
    );
    expect(codes).toEqual([0, 0, 0, 0, 0, 0]);
    const names = await readdir(cacheDir);
    expect(names.length).toBeGreaterThan(0);
    expect(names.filter((n) => n.endsWith('.tmp'))).toEqual([]);
    for (const name of names)
      expect(sha512Hex(await readFile(path.join(cacheDir, name)))).toBe(name);
    const total = (await Promise.all(names.map((n) => stat(path.join(cacheDir, n))))).reduce(
      (sum, s) => sum + s.size,
      0,
    );
    // Each process sees the others' writes only at its next scan: the bound drifts by at most
    // what the other writers hold.
    expect(total).toBeLessThanOrEqual(6 * 40000);
  }, 60_000);
});
