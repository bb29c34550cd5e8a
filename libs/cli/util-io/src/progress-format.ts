/** What a progress count measures: bytes transferred or items (blobs, files) done. */
export type ProgressUnit = 'bytes' | 'items';

/** One transfer's progress as people read it: amount, rate and time left, already formatted. */
export interface ProgressView {
  label: string;
  done: number;
  total: number;
  finished: boolean;
  /** `12.0 MiB of 40.0 MiB` or `3 of 10`. */
  amount: string;
  /** `30%`. */
  percent: string;
  /** `5.2 MiB/s` or `1.5/s`; `-` before there is anything to measure. */
  rate: string;
  /** `6 s left`, `done in 8 s`, or `-`. */
  eta: string;
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'] as const;
// A rate over less time than this is noise (the first chunk of a transfer).
const MIN_RATE_WINDOW_MS = 250;

/** Bytes in binary units with one decimal (`512 B`, `12.0 MiB`). */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${UNITS[unit]}`;
}

/** Seconds as `8 s`, `2 min 5 s` or `1 h 3 min`. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/**
 * Formats a transfer's state; the rate is the average since the transfer's first report
 * (`startedAt`, `startDone`), which is steadier than the last interval's for time left.
 */
export function viewProgress(
  label: string,
  done: number,
  total: number,
  unit: ProgressUnit,
  timing: { startedAt: number; startDone: number; now: number },
): ProgressView {
  const finished = done >= total;
  const shown = Math.max(total, done);
  const format = unit === 'bytes' ? formatBytes : (n: number) => String(n);
  const elapsedMs = timing.now - timing.startedAt;
  const moved = done - timing.startDone;
  const perSecond = elapsedMs >= MIN_RATE_WINDOW_MS && moved > 0 ? moved / (elapsedMs / 1000) : 0;
  const rate =
    perSecond > 0 ? `${unit === 'bytes' ? formatBytes(perSecond) : perSecond.toFixed(1)}/s` : '-';
  let eta = '-';
  if (finished) eta = `done in ${formatDuration(elapsedMs / 1000)}`;
  else if (perSecond > 0) eta = `${formatDuration((shown - done) / perSecond)} left`;
  return {
    label,
    done,
    total: shown,
    finished,
    amount: `${format(done)} of ${format(shown)}`,
    percent: `${shown > 0 ? Math.floor((done / shown) * 100) : 100}%`,
    rate,
    eta,
  };
}

/** The plain (non-TTY) progress line of a view. */
export function plainProgressLine(view: ProgressView): string {
  return `${view.label}: ${view.amount} (${view.percent}), ${view.rate}, ${view.eta}`;
}
