import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { TerminalSecretInput } from './terminal-secret-input';

/** A stdin stand-in that can claim to be a terminal and records raw-mode changes. */
function fakeStdin(isTTY: boolean) {
  const stream = new PassThrough() as PassThrough & {
    isTTY?: boolean;
    setRawMode?: (raw: boolean) => unknown;
    rawModes: boolean[];
  };
  stream.isTTY = isTTY;
  stream.rawModes = [];
  stream.setRawMode = (raw: boolean) => stream.rawModes.push(raw);
  return stream;
}

function captured() {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (d: Buffer) => (text += d.toString()));
  return { stream, text: () => text };
}

describe('TerminalSecretInput', () => {
  it('reads all of stdin as bytes', async () => {
    const stdin = fakeStdin(false);
    const input = new TerminalSecretInput({ stdin, stderr: new PassThrough() });
    expect(input.interactive).toBe(false);
    stdin.end(Buffer.from([0xff, 0x0a]));
    expect([...(await input.readStdin())]).toEqual([0xff, 0x0a]);
  });

  it('reads files and names a missing one', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-input-'));
    try {
      fs.writeFileSync(path.join(dir, 'v'), 'value\n');
      const input = new TerminalSecretInput({ stdin: fakeStdin(false), stderr: new PassThrough() });
      expect((await input.readFile(path.join(dir, 'v'))).toString()).toBe('value\n');
      await expect(input.readFile(path.join(dir, 'missing'))).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
      });
      await expect(input.readFile(dir)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('prompts in raw mode without echoing, handling backspace', async () => {
    const stdin = fakeStdin(true);
    const stderr = captured();
    const input = new TerminalSecretInput({ stdin, stderr: stderr.stream });
    expect(input.interactive).toBe(true);
    const answer = input.promptHidden('Value: ');
    stdin.write('s3x\u007fc\r');
    expect((await answer).toString()).toBe('s3c');
    expect(stdin.rawModes).toEqual([true, false]);
    expect(stderr.text()).toBe('Value: \n');
  });

  it('cancels on Ctrl-C and refuses without a terminal', async () => {
    const stdin = fakeStdin(true);
    const input = new TerminalSecretInput({ stdin, stderr: new PassThrough() });
    const answer = input.promptHidden('Value: ');
    stdin.write('ab\u0003');
    await expect(answer).rejects.toThrow('cancelled');
    await expect(
      new TerminalSecretInput({ stdin: fakeStdin(false), stderr: new PassThrough() }).promptHidden(
        'x',
      ),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });
});
