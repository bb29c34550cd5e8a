import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { useTempDir } from '@podmin/testing';
import { withFileLock } from './file-lock';
import { writeFileAtomic } from './atomic-file';

describe('util-fs', () => {
  const dir = useTempDir('podmin-fs');

  it('names what it was doing and the lock file when the lock cannot be created', async () => {
    const blocker = path.join(dir(), 'not-a-dir');
    fs.writeFileSync(blocker, '');
    const lock = path.join(blocker, '.lock');
    const err: unknown = await withFileLock(lock, 'podmin use: updating config.json', () =>
      Promise.resolve(),
    ).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'IO_ERROR' });
    expect((err as Error).message).toMatch(
      `podmin use: updating config.json: cannot create the lock file ${lock}: ENOTDIR`,
    );
  });

  it('writes atomically with the exact mode and leaves no temporary file', async () => {
    const file = path.join(dir(), 'a', 'config.json');
    await writeFileAtomic(file, '{}\n');
    await writeFileAtomic(file, '{"x":1}\n', { mode: 0o644 });
    expect(fs.readFileSync(file, 'utf8')).toBe('{"x":1}\n');
    expect(fs.statSync(file).mode & 0o777).toBe(0o644);
    expect(fs.readdirSync(path.dirname(file))).toEqual(['config.json']);
  });

  it('serialises read-modify-write cycles so no update is lost', async () => {
    const counter = path.join(dir(), 'n');
    fs.writeFileSync(counter, '0');
    await Promise.all(
      Array.from({ length: 20 }, () =>
        withFileLock(path.join(dir(), 'n.lock'), 'incrementing', async () => {
          const n = Number(fs.readFileSync(counter, 'utf8'));
          await new Promise((r) => setTimeout(r, 1));
          await writeFileAtomic(counter, String(n + 1));
        }),
      ),
    );
    expect(fs.readFileSync(counter, 'utf8')).toBe('20');
    expect(fs.existsSync(path.join(dir(), 'n.lock'))).toBe(false);
  });

  it('breaks a lock whose holder is gone and times out on a live one with the chosen code', async () => {
    const lock = path.join(dir(), 'l.lock');
    fs.writeFileSync(
      lock,
      JSON.stringify({ pid: 2 ** 22 + 12345, host: os.hostname(), token: 'x' }),
    );
    await expect(withFileLock(lock, 'taking over', () => Promise.resolve('ok'))).resolves.toBe(
      'ok',
    );
    fs.writeFileSync(lock, JSON.stringify({ pid: process.pid, host: os.hostname(), token: 'y' }));
    await expect(
      withFileLock(lock, 'waiting', () => Promise.resolve('never'), {
        timeoutMs: 50,
        busyCode: 'BUCKET_UNAVAILABLE',
      }),
    ).rejects.toMatchObject({
      code: 'BUCKET_UNAVAILABLE',
    });
  });
});
