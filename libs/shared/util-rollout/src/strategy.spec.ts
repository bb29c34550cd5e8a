import { hasCode } from '@podmin/util-errors';
import {
  DEFAULT_STRATEGY,
  ROLLOUT_ANNOTATION,
  formatDuration,
  isIntOrPercent,
  parseDurationSeconds,
  resolveIntOrPercent,
  resolveLimits,
  serializeStrategy,
  strategyOf,
  surges,
  type RolloutStrategy,
} from './strategy';

const SURGE: RolloutStrategy = {
  type: 'RollingUpdate',
  maxUnavailable: 0,
  maxSurge: '25%',
  minReadySeconds: 10,
  progressDeadlineSeconds: 90,
};

describe('isIntOrPercent', () => {
  it.each([0, 1, 100, 1000, '0%', '1%', '25%', '100%'])('accepts %j', (value) => {
    expect(isIntOrPercent(value)).toBe(true);
  });

  it.each([
    -1,
    1.5,
    Number.NaN,
    '101%',
    '1000%',
    '00%',
    '5',
    '-5%',
    '5.5%',
    ' 5%',
    '%',
    null,
    true,
  ])('refuses %j', (value) => {
    expect(isIntOrPercent(value)).toBe(false);
  });
});

describe('resolveLimits', () => {
  it('rounds percentages up, as Kubernetes does for DaemonSets', () => {
    expect(resolveIntOrPercent('25%', 10)).toBe(3);
    expect(resolveIntOrPercent('1%', 3)).toBe(1);
    expect(resolveIntOrPercent('0%', 3)).toBe(0);
    expect(resolveIntOrPercent(2, 3)).toBe(2);
    expect(resolveLimits(SURGE, 10)).toEqual({ maxUnavailable: 0, maxSurge: 3 });
  });

  it('lets a rollout move when both limits resolve to 0', () => {
    expect(resolveLimits({ ...SURGE, maxSurge: '10%' }, 0)).toEqual({
      maxUnavailable: 1,
      maxSurge: 0,
    });
  });

  it('refuses a value that is neither', () => {
    expect(() => resolveIntOrPercent('x', 1)).toThrow('not an integer or a percentage');
  });
});

describe('surges', () => {
  it('is true only for RollingUpdate with a maxSurge other than 0 or 0%', () => {
    expect(surges(SURGE)).toBe(true);
    expect(surges({ ...SURGE, maxSurge: 1 })).toBe(true);
    expect(surges(DEFAULT_STRATEGY)).toBe(false);
    expect(surges({ ...SURGE, maxSurge: '0%' })).toBe(false);
    expect(surges({ ...SURGE, type: 'OnDelete' })).toBe(false);
  });
});

describe('serializeStrategy and strategyOf', () => {
  it('round-trips with a fixed key order', () => {
    const text = serializeStrategy({
      progressDeadlineSeconds: 90,
      minReadySeconds: 10,
      maxSurge: '25%',
      maxUnavailable: 0,
      type: 'RollingUpdate',
    });
    expect(text).toBe(
      '{"type":"RollingUpdate","maxUnavailable":0,"maxSurge":"25%","minReadySeconds":10,"progressDeadlineSeconds":90}',
    );
    expect(strategyOf({ [ROLLOUT_ANNOTATION]: text })).toEqual(SURGE);
  });

  it('reads the defaults when the annotation is absent', () => {
    expect(strategyOf(undefined)).toBe(DEFAULT_STRATEGY);
    expect(strategyOf({ other: 'x' })).toBe(DEFAULT_STRATEGY);
  });

  it.each([
    ['not JSON', '{', 'not JSON'],
    ['a list', '[]', 'not an object'],
    ['an unknown field', serializeStrategy(SURGE).replace('}', ',"x":1}'), 'unknown field x'],
    ['a bad type', serializeStrategy({ ...SURGE, type: 'Recreate' as 'OnDelete' }), 'type must'],
    ['a missing field', '{"type":"OnDelete"}', 'maxUnavailable must be'],
    ['a bad percentage', serializeStrategy({ ...SURGE, maxSurge: '101%' }), 'maxSurge must'],
    ['negative seconds', serializeStrategy({ ...SURGE, minReadySeconds: -1 }), 'minReadySeconds'],
    [
      'a zero deadline',
      serializeStrategy({ ...SURGE, progressDeadlineSeconds: 0 }),
      'progressDeadlineSeconds must be > 0',
    ],
  ])('refuses %s', (_title, text, why) => {
    let caught: unknown;
    try {
      strategyOf({ [ROLLOUT_ANNOTATION]: text });
    } catch (err) {
      caught = err;
    }
    expect(hasCode(caught, 'INVALID_MANIFEST')).toBe(true);
    expect(String(caught)).toContain(`reading annotation ${ROLLOUT_ANNOTATION}: ${why}`);
  });
});

describe('parseDurationSeconds', () => {
  it.each([
    ['90s', 90],
    ['5m', 300],
    ['1h30m', 5400],
    ['1h', 3600],
    ['2m30s', 150],
    ['1h0m5s', 3605],
  ])('reads %s as %d seconds', (text, seconds) => {
    expect(parseDurationSeconds(text)).toBe(seconds);
    expect(parseDurationSeconds(formatDuration(seconds))).toBe(seconds);
  });

  it.each([
    '',
    '0s',
    '0h0m0s',
    '5',
    '1d',
    '1.5h',
    '-5m',
    '5m1h',
    ' 5m',
    '5M',
    '99999999999999999999h',
  ])('refuses %j', (text) => {
    expect(parseDurationSeconds(text)).toBeUndefined();
  });

  it('formats like Go', () => {
    expect(formatDuration(300)).toBe('5m0s');
    expect(formatDuration(5400)).toBe('1h30m0s');
    expect(formatDuration(42)).toBe('42s');
  });
});
