import { Readable } from 'node:stream';
import { readableBody } from './object-body';

describe('readableBody', () => {
  it('fills each buffer across chunk boundaries and reads 0 at the end', async () => {
    const body = readableBody(Readable.from(['abc', 'defg', 'h'].map((s) => Buffer.from(s))));
    const into = new Uint8Array(3);
    const parts: string[] = [];
    for (let n = await body.read(into); n > 0; n = await body.read(into)) {
      parts.push(Buffer.from(into.subarray(0, n)).toString());
    }
    expect(parts).toEqual(['abc', 'def', 'gh']);
    expect(await body.read(into)).toBe(0);
  });

  it('passes on a stream error and destroys the stream on close', async () => {
    const failing = new Readable({ read: () => failing.destroy(new Error('connection reset')) });
    await expect(readableBody(failing).read(new Uint8Array(4))).rejects.toThrow('connection reset');
    const open = new Readable({ read: () => undefined });
    await readableBody(open).close();
    expect(open.destroyed).toBe(true);
  });
});

describe('readableBody flow control', () => {
  it('pauses a fast stream once a read’s worth is queued and resumes as it is read', async () => {
    let pushed = 0;
    const source = new Readable({
      read() {
        if (pushed >= 64) this.push(null);
        else {
          pushed += 1;
          this.push(Buffer.alloc(16 * 1024, pushed));
        }
      },
    });
    const body = readableBody(source);
    const into = new Uint8Array(256 * 1024);
    expect(await body.read(into)).toBe(256 * 1024);
    // Let the stream run ahead as far as it will while nobody reads.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(source.isPaused()).toBe(true);
    // Queued: at most one read's worth plus the chunk that crossed the mark, and the stream's
    // own buffer (its high-water mark).
    expect(pushed * 16 * 1024 - 256 * 1024).toBeLessThanOrEqual(
      256 * 1024 + 16 * 1024 + source.readableHighWaterMark + 16 * 1024,
    );
    let total = 256 * 1024;
    for (let n = await body.read(into); n > 0; n = await body.read(into)) total += n;
    expect(total).toBe(64 * 16 * 1024);
  });

  it('fails a read when the stream closes before its end', async () => {
    const cut = new Readable({ read: () => undefined });
    const body = readableBody(cut);
    cut.push(Buffer.from('ab'));
    setTimeout(() => cut.destroy(), 5);
    const into = new Uint8Array(4);
    await expect(body.read(into)).rejects.toThrow('closed before its end');
  });

  it('hands out what was queued before an error, then the error', async () => {
    const failing = new Readable({ read: () => undefined });
    const body = readableBody(failing);
    failing.push(Buffer.from('abcd'));
    await new Promise((resolve) => setImmediate(resolve));
    failing.destroy(new Error('connection reset'));
    const into = new Uint8Array(4);
    expect(await body.read(into)).toBe(4);
    expect(Buffer.from(into).toString()).toBe('abcd');
    await expect(body.read(into)).rejects.toThrow('connection reset');
  });
});
