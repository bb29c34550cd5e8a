import fs from 'node:fs';

/** Where a command's results go: anything with `write(text)`. */
export interface TextSink {
  write(text: string): unknown;
}

/**
 * Writes to a file descriptor with `fs.writeSync`, without creating `process.stdout`: Node.js
 * builds that stream (and, for a pipe, loads its net modules) on first use, a few milliseconds
 * of every start for a command that prints one line (bench/cli-start.mjs). A descriptor left
 * non-blocking by the parent (EAGAIN) hands the rest to the stream, which waits for the reader;
 * a closed reader (EPIPE, as with `podmin list | head`) ends output quietly, as a pipe expects.
 */
export class FdWriter implements TextSink {
  private fallback: TextSink | undefined;
  private closed = false;

  constructor(
    private readonly fd: number,
    private readonly stream: () => TextSink,
  ) {}

  write(text: string): boolean {
    if (this.closed) return false;
    if (this.fallback !== undefined) {
      this.fallback.write(text);
      return true;
    }
    const bytes = Buffer.from(text, 'utf8');
    let offset = 0;
    while (offset < bytes.length) {
      try {
        offset += fs.writeSync(this.fd, bytes, offset, bytes.length - offset);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'EPIPE') {
          this.closed = true;
          return false;
        }
        if (code !== 'EAGAIN') throw err;
        this.fallback = this.stream();
        this.fallback.write(bytes.subarray(offset).toString('utf8'));
        return true;
      }
    }
    return true;
  }
}
