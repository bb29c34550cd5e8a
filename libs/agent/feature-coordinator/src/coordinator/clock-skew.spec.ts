import type { ServerTimeSample } from '@podmin/data-access-object-store';
import { RecordingLog } from '../__fixtures__/recording-log';
import type { ServerTimeSource } from '../coordinator.ports';
import { CLOCK_SKEW_WARN_MS, ClockSkewMonitor } from './clock-skew';

const SERVER_MS = Date.parse('2031-02-03T04:05:06Z');

/** A bucket whose last response said the server's time was SERVER_MS while ours read SERVER_MS + skew. */
class FakeServerTime implements ServerTimeSource {
  sample: ServerTimeSample | undefined;
  skew(ms: number): void {
    this.sample = { serverMs: SERVER_MS, localMs: SERVER_MS + ms };
  }
  lastServerTime(): ServerTimeSample | undefined {
    return this.sample;
  }
}

describe('ClockSkewMonitor', () => {
  let store: FakeServerTime;
  let log: RecordingLog;
  let monitor: ClockSkewMonitor;

  beforeEach(() => {
    store = new FakeServerTime();
    log = new RecordingLog();
    monitor = new ClockSkewMonitor(store, log);
  });

  it('warns at more than 30 s', () => {
    expect(CLOCK_SKEW_WARN_MS).toBe(30_000);
    store.skew(30_000);
    expect(monitor.check()).toBeUndefined();
    store.skew(-30_001);
    expect(monitor.check()).toMatch(/30 s behind the object store's/);
  });

  it('says nothing before the store has seen the server time, or while the clocks agree', () => {
    expect(monitor.check()).toBeUndefined();
    store.skew(-2_000);
    expect(monitor.check()).toBeUndefined();
    expect(log.lines).toEqual([]);
  });

  it('logs once per change of state, not per check, and notes the skew while it lasts', () => {
    store.skew(-60_000);
    const note = monitor.check();
    expect(note).toBe(
      "clock skew: this node's clock is 60 s behind the object store's (over 30 s); check its time synchronisation",
    );
    for (const ms of [-61_000, -59_000, -60_000, -28_000]) {
      store.skew(ms);
      expect(monitor.check()).toBe(note);
    }
    expect(log.lines).toEqual([
      {
        level: 'warn',
        msg: 'clock skew',
        fields: { skewMs: -60_000, thresholdMs: 30_000, certificateMarginMs: 300_000 },
      },
    ]);
    store.skew(-20_000);
    expect(monitor.check()).toBeUndefined();
    expect(monitor.check()).toBeUndefined();
    expect(log.lines.map((l) => [l.level, l.msg, l.fields['skewMs']])).toEqual([
      ['warn', 'clock skew', -60_000],
      ['info', 'clock skew cleared', -20_000],
    ]);
  });

  it('warns again when the skew moves by more than the threshold, either way', () => {
    store.skew(45_000);
    expect(monitor.check()).toMatch(/45 s ahead of/);
    store.skew(200_000);
    expect(monitor.check()).toMatch(/200 s ahead of/);
    store.skew(-90_000);
    expect(monitor.check()).toMatch(/90 s behind/);
    expect(log.lines.map((l) => l.fields['skewMs'])).toEqual([45_000, 200_000, -90_000]);
  });
});
