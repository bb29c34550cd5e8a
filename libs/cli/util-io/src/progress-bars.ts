import { MultiBar, Presets, type SingleBar } from 'cli-progress';
import type { ProgressView } from './progress-format';

/**
 * Progress bars on a terminal, one line per transfer, drawn by `cli-progress`. Loaded by the
 * terminal reporter only when a TTY shows progress, so other commands never load it.
 */
export class ProgressBars {
  private multi: MultiBar | undefined;
  private readonly bars = new Map<string, SingleBar>();

  constructor(private readonly stream: NodeJS.WritableStream) {}

  /** Draws or redraws the bar of `view.label`; the display ends when every bar is finished. */
  update(view: ProgressView): void {
    const multi = (this.multi ??= this.open());
    const payload = { label: view.label, amount: view.amount, rate: view.rate, left: view.eta };
    // `left`, not `eta`: cli-progress fills its own tokens (eta, value, total) over a payload's.
    // cli-progress divides by the total: an empty transfer is drawn as one of one.
    const total = Math.max(view.total, 1);
    const value = view.total === 0 ? 1 : view.done;
    let bar = this.bars.get(view.label);
    if (bar === undefined) {
      bar = multi.create(total, value, payload);
      this.bars.set(view.label, bar);
    } else {
      bar.setTotal(total);
      bar.update(value, payload);
    }
    if (view.finished) bar.stop();
    if ([...this.bars.values()].every((b) => !b.isActive)) this.stop();
  }

  /** Writes a status line above the bars (or plainly when none are drawn). */
  log(text: string): void {
    if (this.multi === undefined) {
      this.stream.write(text);
      return;
    }
    this.multi.log(text);
    this.multi.update();
  }

  /** Draws the bars' final state and leaves the cursor below them. */
  stop(): void {
    process.removeListener('exit', this.stopAtExit);
    this.multi?.stop();
    this.multi = undefined;
    this.bars.clear();
  }

  // A command that fails mid-transfer exits with bars drawn: stopping them then restores line
  // wrapping, which cli-progress turns off while it draws (TTY writes are synchronous).
  private readonly stopAtExit = (): void => this.stop();

  private open(): MultiBar {
    const multi = new MultiBar(
      {
        stream: this.stream,
        format: '{label} [{bar}] {percentage}% | {amount} | {rate} | {left}',
        barsize: 24,
        hideCursor: false,
        clearOnComplete: false,
        stopOnComplete: false,
        autopadding: true,
        fps: 10,
      },
      Presets.legacy,
    );
    // cli-progress redraws on a timer it does not unref: a command that fails mid-transfer
    // must still exit, so the timer never keeps the process alive.
    const unref = (): void => {
      (multi as unknown as { timer?: NodeJS.Timeout | null }).timer?.unref();
    };
    multi.on('start', unref);
    multi.on('update-post', unref);
    process.once('exit', this.stopAtExit);
    return multi;
  }
}
