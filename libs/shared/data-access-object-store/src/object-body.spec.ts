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
