import fs from 'node:fs/promises';
import { PodminError } from '@podmin/util-errors';
import type { SecretValueInput } from './secrets.ports';

/** Largest value read from stdin or a file; far above every provider limit. */
const MAX_INPUT_BYTES = 1024 * 1024;

/** Streams the terminal input reads from and prompts on (injected for tests). */
export interface SecretInputStreams {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };
  stderr: NodeJS.WritableStream;
}

const tooLarge = (what: string) =>
  new PodminError('INVALID_ARGUMENT', `reading ${what}: the value is larger than 1 MiB`);

/** Reads secret values from stdin, files, or a prompt that echoes nothing. */
export class TerminalSecretInput implements SecretValueInput {
  constructor(private readonly streams: SecretInputStreams) {}

  get interactive(): boolean {
    return this.streams.stdin.isTTY === true;
  }

  async readStdin(): Promise<Buffer> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of this.streams.stdin) {
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      size += buffer.length;
      if (size > MAX_INPUT_BYTES) throw tooLarge('stdin');
      chunks.push(buffer);
    }
    return Buffer.concat(chunks);
  }

  async readFile(file: string): Promise<Buffer> {
    try {
      const stat = await fs.stat(file);
      if (!stat.isFile())
        throw new PodminError('INVALID_ARGUMENT', `reading ${file}: not a regular file`);
      if (stat.size > MAX_INPUT_BYTES) throw tooLarge(file);
      return await fs.readFile(file);
    } catch (err) {
      if (err instanceof PodminError) throw err;
      const code = (err as NodeJS.ErrnoException).code;
      throw new PodminError(
        code === 'ENOENT' || code === 'EACCES' ? 'INVALID_ARGUMENT' : 'IO_ERROR',
        `reading ${file}: ${(err as Error).message}`,
        { cause: err },
      );
    }
  }

  promptHidden(question: string): Promise<Buffer> {
    const { stdin, stderr } = this.streams;
    if (!this.interactive || stdin.setRawMode === undefined) {
      return Promise.reject(new PodminError('INVALID_ARGUMENT', 'no terminal to prompt on'));
    }
    const setRawMode = stdin.setRawMode.bind(stdin);
    stderr.write(question);
    return new Promise<Buffer>((resolve, reject) => {
      let typed = '';
      const finish = (error?: PodminError): void => {
        stdin.removeListener('data', onData);
        setRawMode(false);
        stdin.pause();
        stderr.write('\n');
        if (error) reject(error);
        else resolve(Buffer.from(typed, 'utf8'));
      };
      const onData = (chunk: Buffer | string): void => {
        for (const char of typeof chunk === 'string' ? chunk : chunk.toString('utf8')) {
          if (char === '\r' || char === '\n' || char === '\u0004') return finish();
          if (char === '\u0003') return finish(new PodminError('INVALID_ARGUMENT', 'cancelled'));
          if (char === '\u007f' || char === '\b') typed = [...typed].slice(0, -1).join('');
          else if (char >= ' ') typed += char;
        }
      };
      setRawMode(true);
      stdin.resume();
      stdin.on('data', onData);
    });
  }
}
