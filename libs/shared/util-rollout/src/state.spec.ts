import { PodminError } from '@podmin/util-errors';
import {
  EMPTY_ROLLOUT_STATE,
  MAX_ROLLOUT_STATE_BYTES,
  ROLLOUT_STATE_KEY,
  RolloutStateFormatError,
  newRollout,
  parseRolloutState,
  serializeRolloutState,
  type RolloutState,
} from './state';

const T = '2025-01-01T00:00:00.000Z';

const sample: RolloutState = {
  schema: 1,
  deployments: {
    'default/web': {
      target: 'pods/web-v2',
      attempt: 2,
      admitted: { 'i-0b': T, 'i-0a': '2025-01-01T00:00:05Z' },
      paused: false,
      halted: { node: 'i-0a', reason: 'CrashLoopBackOff', time: T },
    },
    'default/api': newRollout('pods/api-v7', true),
  },
};

/** The error parsing `body` throws. */
function refusal(body: string | Buffer): RolloutStateFormatError {
  try {
    parseRolloutState(body);
  } catch (err) {
    if (err instanceof RolloutStateFormatError) return err;
    throw err;
  }
  throw new Error('expected a RolloutStateFormatError');
}

describe('newRollout', () => {
  it('starts at attempt 1 with no admissions, no halt, and the pause given', () => {
    expect(newRollout('pods/a')).toEqual({
      target: 'pods/a',
      attempt: 1,
      admitted: {},
      paused: false,
      halted: null,
    });
    expect(newRollout('pods/a', true).paused).toBe(true);
  });
});

describe('serializeRolloutState', () => {
  it('writes canonical JSON: sorted keys, fixed field order, one trailing newline', () => {
    expect(serializeRolloutState(sample)).toBe(
      '{"schema":1,"deployments":{' +
        '"default/api":{"target":"pods/api-v7","attempt":1,"admitted":{},"paused":true,"halted":null},' +
        '"default/web":{"target":"pods/web-v2","attempt":2,' +
        `"admitted":{"i-0a":"2025-01-01T00:00:05Z","i-0b":"${T}"},"paused":false,` +
        `"halted":{"node":"i-0a","reason":"CrashLoopBackOff","time":"${T}"}}}}\n`,
    );
  });

  it('gives equal bytes for equal states built in another order', () => {
    const reordered: RolloutState = {
      deployments: {
        'default/api': {
          halted: null,
          paused: true,
          admitted: {},
          attempt: 1,
          target: 'pods/api-v7',
        },
        'default/web': {
          ...(sample.deployments['default/web'] as RolloutState['deployments'][string]),
          admitted: { 'i-0a': '2025-01-01T00:00:05Z', 'i-0b': T },
        },
      },
      schema: 1,
    };
    expect(serializeRolloutState(reordered)).toBe(serializeRolloutState(sample));
  });

  it('writes the empty state', () => {
    expect(serializeRolloutState(EMPTY_ROLLOUT_STATE)).toBe('{"schema":1,"deployments":{}}\n');
  });
});

describe('parseRolloutState', () => {
  it('round-trips what serializeRolloutState writes, from text and from bytes', () => {
    const text = serializeRolloutState(sample);
    expect(parseRolloutState(text)).toEqual(sample);
    expect(serializeRolloutState(parseRolloutState(Buffer.from(text)))).toBe(text);
    expect(parseRolloutState(serializeRolloutState(EMPTY_ROLLOUT_STATE))).toEqual(
      EMPTY_ROLLOUT_STATE,
    );
  });

  it('keeps keys such as __proto__ and constructor ordinary keys', () => {
    const text =
      '{"schema":1,"deployments":{"__proto__":{"target":"p","attempt":1,' +
      `"admitted":{"constructor":"${T}","__proto__":"${T}"},"paused":false,"halted":null}}}\n`;
    const state = parseRolloutState(text);
    expect(Object.keys(state.deployments)).toEqual(['__proto__']);
    expect(Object.keys(state.deployments['__proto__']?.admitted ?? {}).sort()).toEqual([
      '__proto__',
      'constructor',
    ]);
    expect(serializeRolloutState(state)).toBe(
      '{"schema":1,"deployments":{"__proto__":{"target":"p","attempt":1,' +
        `"admitted":{"__proto__":"${T}","constructor":"${T}"},"paused":false,"halted":null}}}\n`,
    );
    // An ordinary object's inherited names are not deployments.
    expect(
      Object.hasOwn(parseRolloutState(serializeRolloutState(sample)).deployments, 'toString'),
    ).toBe(false);
  });

  const entry = (over: Record<string, unknown>): string =>
    JSON.stringify({
      schema: 1,
      deployments: {
        'default/web': {
          target: 'pods/web-v2',
          attempt: 1,
          admitted: {},
          paused: false,
          halted: null,
          ...over,
        },
      },
    });
  const halt = { node: 'i-0a', reason: 'x', time: T };

  it.each([
    ['not JSON', '{"schema":1,', 'parsing'],
    ['trailing data', '{"schema":1,"deployments":{}} {}', 'parsing'],
    ['a duplicate key', '{"schema":1,"schema":1,"deployments":{}}', 'duplicate key'],
    ['an array', '[]', 'the state must be an object'],
    ['schema 2', '{"schema":2,"deployments":{}}', 'schema must be 1'],
    ['an unknown top-level field', '{"schema":1,"deployments":{},"x":1}', 'unknown field x'],
    ['no deployments', '{"schema":1}', 'lacks the field deployments'],
    ['deployments as an array', '{"schema":1,"deployments":[]}', 'deployments must be an object'],
    ['an unknown deployment field', entry({ revision: 'r' }), 'unknown field revision'],
    ['a missing deployment field', entry({ paused: undefined }), 'lacks the field paused'],
    ['attempt 0', entry({ attempt: 0 }), 'attempt must be an integer'],
    ['a fractional attempt', entry({ attempt: 1.5 }), 'attempt must be an integer'],
    ['a string attempt', entry({ attempt: '1' }), 'attempt must be an integer'],
    ['an empty target', entry({ target: '' }), 'target must be a non-empty string'],
    ['a numeric target', entry({ target: 7 }), 'target must be a non-empty string'],
    ['a string paused', entry({ paused: 'false' }), 'paused must be a boolean'],
    ['admitted as an array', entry({ admitted: [] }), 'admitted must be an object'],
    ['an empty admission time', entry({ admitted: { 'i-0a': '' } }), 'admitted i-0a'],
    ['a non-time admission', entry({ admitted: { 'i-0a': 'yesterday' } }), 'RFC 3339'],
    [
      'an admission without zone',
      entry({ admitted: { 'i-0a': '2025-01-01T00:00:00' } }),
      'RFC 3339',
    ],
    [
      'an impossible admission time',
      entry({ admitted: { 'i-0a': '2025-13-45T00:00:00Z' } }),
      'RFC 3339',
    ],
    ['a nested admission', entry({ admitted: { 'i-0a': { at: T } } }), 'admitted i-0a'],
    [
      'a halt with an extra field',
      entry({ halted: { ...halt, attempt: 1 } }),
      'unknown field attempt',
    ],
    [
      'a halt without a reason',
      entry({ halted: { node: 'i-0a', time: T } }),
      'lacks the field reason',
    ],
    ['a halt with an empty reason', entry({ halted: { ...halt, reason: '' } }), 'halted.reason'],
    ['a halt with a bad time', entry({ halted: { ...halt, time: 'now' } }), 'halted.time'],
    ['a halt as a string', entry({ halted: 'i-0a' }), 'halted must be an object'],
  ])('refuses %s', (_what, body, why) => {
    const err = refusal(body);
    expect(err).toBeInstanceOf(PodminError);
    expect(err.code).toBe('INVALID_MANIFEST');
    expect(err.message).toContain(`reading ${ROLLOUT_STATE_KEY}: `);
    expect(err.message).toContain(why);
  });

  it('refuses an object over the size limit before parsing it', () => {
    const body = `{"schema":1,"deployments":{}}${' '.repeat(MAX_ROLLOUT_STATE_BYTES)}`;
    expect(refusal(body).message).toContain('byte limit');
  });

  it('refuses bytes that are not UTF-8', () => {
    expect(refusal(Buffer.from([0x7b, 0xff, 0x7d])).message).toContain('UTF-8');
  });
});
