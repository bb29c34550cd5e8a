import readline from 'node:readline';
import { escapeControlCharacters } from '@podmin/util-errors';
import type { Reporter } from './reporter';

/** Streams the terminal reporter writes to (injected for tests). */
export interface TerminalStreams {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
}

/** The one place that writes to the terminal. */
export class TerminalReporter implements Reporter {
  private progressLine = false;

  constructor(
    private readonly streams: TerminalStreams = {
      stdout: process.stdout,
      stderr: process.stderr,
      stdin: process.stdin,
    },
  ) {}

  info(message: string): void {
    this.line(message);
  }

  warn(message: string): void {
    this.line(`Warning: ${message}`);
  }

  progress(label: string, done: number, total: number): void {
    const { stderr } = this.streams;
    if (stderr.isTTY) {
      const width = 24;
      const filled = total > 0 ? Math.round((done / total) * width) : width;
      stderr.write(
        `\r\x1b[2K${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}`,
      );
      this.progressLine = done < total;
      if (!this.progressLine) stderr.write('\n');
    } else if (done === total || done === 0) {
      stderr.write(`${label}: ${done}/${total}\n`);
    }
  }

  result(text: string): void {
    this.endProgress();
    this.streams.stdout.write(text.endsWith('\n') ? text : text + '\n');
  }

  async confirm(question: string): Promise<boolean> {
    const { stdin, stderr } = this.streams;
    if (!stdin.isTTY) return false;
    this.endProgress();
    const rl = readline.createInterface({ input: stdin, output: stderr });
    try {
      const answer = await new Promise<string>((resolve) =>
        rl.question(`${question} [y/N] `, resolve),
      );
      return /^y(es)?$/i.test(answer.trim());
    } finally {
      rl.close();
    }
  }

  private line(message: string): void {
    this.endProgress();
    // Status lines echo input too (names, paths, labels): it must not drive the terminal.
    const safe = escapeControlCharacters(message, { keepNewlines: true });
    this.streams.stderr.write(safe.endsWith('\n') ? safe : safe + '\n');
  }

  private endProgress(): void {
    if (this.progressLine) {
      this.streams.stderr.write('\n');
      this.progressLine = false;
    }
  }
}
