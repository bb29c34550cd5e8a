import type { ImageReporter } from '../image-deps';

/** A reporter fake that records status lines, warnings and progress for assertions. */
export class QuietReporter implements ImageReporter {
  readonly lines: string[] = [];
  readonly warnings: string[] = [];
  readonly progressEvents: Array<{
    label: string;
    done: number;
    total: number;
    unit?: 'bytes' | 'items';
  }> = [];

  info(message: string): void {
    this.lines.push(message);
  }
  warn(message: string): void {
    this.warnings.push(message);
  }
  progress(label: string, done: number, total: number, unit?: 'bytes' | 'items'): void {
    this.progressEvents.push({ label, done, total, ...(unit === undefined ? {} : { unit }) });
  }
}
