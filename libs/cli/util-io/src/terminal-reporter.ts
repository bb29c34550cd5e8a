import readline from 'node:readline';
import { escapeControlCharacters } from '@podmin/util-errors';
import type { Reporter } from './reporter';
import type { ProgressBars } from './progress-bars';
import type { TextSink } from './fd-writer';
import {
  plainProgressLine,
  viewProgress,
  type ProgressUnit,
  type ProgressView,
} from './progress-format';

/** Streams the terminal reporter writes to (injected for tests). */
export interface TerminalStreams {
  stdout: TextSink;
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
}

/** Clock and pacing of the terminal reporter (injected for tests). */
export interface TerminalReporterOptions {
  /** Milliseconds, for rates and pacing (Date.now). */
  now?: () => number;
  /** Without a TTY, at most one progress line per transfer this often (5000 ms). */
  plainProgressIntervalMs?: number;
}

interface TransferState {
  startedAt: number;
  startDone: number;
  lastLineAt: number;
}

/** The one place that writes to the terminal. */
export class TerminalReporter implements Reporter {
  private readonly transfers = new Map<string, TransferState>();
  private readonly now: () => number;
  private readonly plainIntervalMs: number;
  private bars: ProgressBars | undefined;
  private barsLoading: Promise<void> | undefined;
  private readonly pendingViews = new Map<string, ProgressView>();
  private barsUnavailable = false;

  constructor(
    private readonly streams: TerminalStreams = {
      stdout: process.stdout,
      stderr: process.stderr,
      stdin: process.stdin,
    },
    options: TerminalReporterOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.plainIntervalMs = options.plainProgressIntervalMs ?? 5000;
  }

  info(message: string): void {
    this.line(message);
  }

  warn(message: string): void {
    this.line(`Warning: ${message}`);
  }

  progress(label: string, done: number, total: number, unit: ProgressUnit = 'items'): void {
    const now = this.now();
    let state = this.transfers.get(label);
    if (state === undefined) {
      state = { startedAt: now, startDone: done, lastLineAt: Number.NEGATIVE_INFINITY };
      this.transfers.set(label, state);
    }
    // Labels echo input (image names, file names): they must not drive the terminal.
    const view = viewProgress(escapeControlCharacters(label), done, total, unit, {
      ...state,
      now,
    });
    if (view.finished) this.transfers.delete(label);
    if (this.streams.stderr.isTTY && !this.barsUnavailable) {
      this.drawBar(view);
    } else if (view.finished || now - state.lastLineAt >= this.plainIntervalMs) {
      state.lastLineAt = now;
      this.streams.stderr.write(plainProgressLine(view) + '\n');
    }
  }

  /** Resolves once the bars drawn so far are on the terminal (tests, and before exiting). */
  async settled(): Promise<void> {
    await this.barsLoading;
  }

  result(text: string): void {
    this.endBars();
    this.streams.stdout.write(text.endsWith('\n') ? text : text + '\n');
  }

  async confirm(question: string): Promise<boolean> {
    const { stdin, stderr } = this.streams;
    if (!stdin.isTTY) return false;
    this.endBars();
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
    // Status lines echo input too (names, paths, labels): it must not drive the terminal.
    const safe = escapeControlCharacters(message, { keepNewlines: true });
    const text = safe.endsWith('\n') ? safe : safe + '\n';
    if (this.bars) this.bars.log(text);
    else this.streams.stderr.write(text);
  }

  private drawBar(view: ProgressView): void {
    if (this.bars) {
      this.bars.update(view);
      return;
    }
    this.pendingViews.set(view.label, view);
    // cli-progress loads on the first bar only: most commands never draw one, and the CLI's
    // start time is budgeted (bench/cli-start.mjs).
    this.barsLoading ??= import('./progress-bars').then(
      ({ ProgressBars }) => {
        const bars = new ProgressBars(this.streams.stderr);
        this.bars = bars;
        for (const pending of this.pendingViews.values()) bars.update(pending);
        this.pendingViews.clear();
      },
      () => {
        // Without the bars module (a broken install), progress falls back to plain lines.
        this.barsUnavailable = true;
        for (const pending of this.pendingViews.values())
          this.streams.stderr.write(plainProgressLine(pending) + '\n');
        this.pendingViews.clear();
      },
    );
  }

  private endBars(): void {
    this.bars?.stop();
  }
}
