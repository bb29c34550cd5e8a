import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { FdWriter } from './fd-writer';

/** The descriptor of the parent's end of a child's stdin pipe (non-blocking, as libuv opens it). */
function stdinFd(child: ChildProcess): number {
  const fd = (child.stdin as unknown as { _handle?: { fd?: number } })._handle?.fd;
  if (typeof fd !== 'number' || fd < 0) throw new Error('no pipe descriptor');
  return fd;
}

describe('FdWriter', () => {
  it('writes whole texts to a file descriptor without a stream', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'fd-writer-')), 'out');
    const fd = fs.openSync(file, 'w');
    const writer = new FdWriter(fd, () => {
      throw new Error('no fallback expected');
    });
    writer.write('héllo\n');
    writer.write('x'.repeat(200_000));
    fs.closeSync(fd);
    expect(fs.readFileSync(file, 'utf8')).toBe('héllo\n' + 'x'.repeat(200_000));
  });

  it('hands the rest to the stream when the pipe is full (EAGAIN)', async () => {
    const child = spawn('sleep', ['30'], { stdio: ['pipe', 'ignore', 'ignore'] });
    try {
      const seen: string[] = [];
      const writer = new FdWriter(stdinFd(child), () => ({ write: (t: string) => seen.push(t) }));
      const text = 'y'.repeat(1 << 20);
      expect(writer.write(text)).toBe(true);
      // A pipe holds far less than 1 MiB, so part went to the descriptor and the rest to the stream.
      const rest = seen.join('');
      expect(rest.length).toBeGreaterThan(0);
      expect(rest.length).toBeLessThan(text.length);
      writer.write('tail');
      expect(seen.at(-1)).toBe('tail');
    } finally {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
  });

  it('ends output quietly when the reader has gone (EPIPE)', async () => {
    // The child closes its end of the pipe, says so, and stays alive holding nothing open.
    const child = spawn('sh', ['-c', 'exec 0<&-; echo closed; exec sleep 30'], {
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    try {
      child.stdin?.on('error', () => undefined);
      await once(child.stdout, 'data');
      const writer = new FdWriter(stdinFd(child), () => {
        throw new Error('no fallback expected');
      });
      expect(writer.write('lost\n')).toBe(false);
      expect(writer.write('also lost\n')).toBe(false);
    } finally {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
  });
});
