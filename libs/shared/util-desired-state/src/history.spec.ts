import { hasCode } from '@podmin/util-errors';
import { podPayloadKey, servicePayloadKey, sha512Hex } from './desired-index';
import {
  MAX_HISTORY_RECORD_BYTES,
  historyKey,
  historyPrefix,
  parseHistoryKey,
  parseHistoryRecord,
  revisionOf,
  serializeHistoryRecord,
  type HistoryRecord,
} from './history';

const podA = podPayloadKey('default', 'kind: Pod\nv: 1\n');
const podB = podPayloadKey('default', 'kind: Pod\nv: 2\n');
const svc = servicePayloadKey('product', 'web', 'kind: Service\n');
const time = new Date('2026-12-01T22:45:26.123Z');
const key = historyKey('default', 'web', time, '0123456789abcdef');
const record: HistoryRecord = {
  deployment: 'default/web',
  action: 'deploy',
  time: time.toISOString(),
  replaced: { pod: podA, service: svc },
  replacement: { pod: podB },
};

function parseText(text: string, at = key): HistoryRecord {
  return parseHistoryRecord(at, Buffer.from(text));
}

function problemsOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(hasCode(err, 'INVALID_MANIFEST')).toBe(true);
    return (err as Error).message;
  }
  throw new Error('expected a rejection');
}

describe('revisionOf', () => {
  it('is the first 12 hex of the Pod payload digest', () => {
    expect(revisionOf({ pod: podA, service: svc })).toBe(
      sha512Hex('kind: Pod\nv: 1\n').slice(0, 12),
    );
    expect(revisionOf({ pod: podA })).toMatch(/^[0-9a-f]{12}$/);
  });

  it('refuses a key that is not a Pod payload key', () => {
    expect(() => revisionOf({ pod: 'nodegroups/default/pods/x.yaml' })).toThrow(
      /not a Pod payload key/,
    );
  });
});

describe('history keys', () => {
  it('sort by time within the deployment prefix and parse back', () => {
    expect(key).toBe('history/default/web/20261201T224526123Z-0123456789abcdef.json');
    expect(key.startsWith(historyPrefix('default', 'web'))).toBe(true);
    expect(parseHistoryKey(key)).toEqual({
      nodegroup: 'default',
      name: 'web',
      stamp: '20261201T224526123Z',
      id: '0123456789abcdef',
    });
    const later = historyKey(
      'default',
      'web',
      new Date('2026-12-01T22:45:27.000Z'),
      'ffffffffffffffff',
    );
    expect([later, key].sort()).toEqual([key, later]);
    expect(parseHistoryKey('history/default/web/x.json')).toBeUndefined();
    expect(() => historyKey('default', 'web', time, 'XYZ')).toThrow(/16 hex/);
  });
});

describe('parseHistoryRecord', () => {
  it('round-trips the canonical form', () => {
    const text = serializeHistoryRecord(record);
    expect(Object.keys(JSON.parse(text) as object)).toEqual([
      'deployment',
      'action',
      'time',
      'replaced',
      'replacement',
    ]);
    expect(text.endsWith('}\n')).toBe(true);
    expect(parseText(text)).toEqual(record);
    const deleted: HistoryRecord = { ...record, action: 'delete', replacement: null };
    expect(parseText(serializeHistoryRecord(deleted))).toEqual(deleted);
  });

  it('rejects unknown and missing fields, naming what is allowed', () => {
    const extra = JSON.stringify({ ...record, by: 'me' });
    expect(problemsOf(() => parseText(extra))).toMatch(
      /by: unknown field; allowed: deployment, action, time, replaced, replacement/,
    );
    const missing: Partial<HistoryRecord> = { ...record };
    delete missing.time;
    expect(problemsOf(() => parseText(JSON.stringify(missing)))).toMatch(/time: is required/);
    const entryExtra = JSON.stringify({ ...record, replaced: { pod: podA, x: 1 } });
    expect(problemsOf(() => parseText(entryExtra))).toMatch(
      /replaced\.x: unknown field; allowed: pod, service/,
    );
  });

  it('rejects duplicate keys, trailing data, non-JSON and invalid UTF-8', () => {
    const text = serializeHistoryRecord(record);
    const dup = text.replace('"action": "deploy",', '"action": "deploy",\n  "action": "rollback",');
    expect(problemsOf(() => parseText(dup))).toMatch(/action: duplicate key/);
    expect(problemsOf(() => parseText(`${text}{}`))).toMatch(/not valid UTF-8 JSON/);
    expect(problemsOf(() => parseText('[1]'))).toMatch(/must be a JSON object/);
    const bad = Buffer.concat([
      Buffer.from(text.slice(0, -2)),
      Buffer.from([0xff]),
      Buffer.from('}\n'),
    ]);
    expect(problemsOf(() => parseHistoryRecord(key, bad))).toMatch(/not valid UTF-8 JSON/);
  });

  it('rejects an oversized record before parsing it', () => {
    const big = Buffer.alloc(MAX_HISTORY_RECORD_BYTES + 1, 0x20);
    expect(problemsOf(() => parseHistoryRecord(key, big))).toMatch(/over 16384 bytes/);
  });

  it('requires the deployment, NodeGroup and time its key names', () => {
    const other = JSON.stringify({ ...record, deployment: 'default/api' });
    expect(problemsOf(() => parseText(other))).toMatch(/deployment: must be default\/web/);
    const foreignPod = JSON.stringify({ ...record, replaced: { pod: podPayloadKey('edge', 'x') } });
    expect(problemsOf(() => parseText(foreignPod))).toMatch(
      /replaced\.pod: must be nodegroups\/default\/pods/,
    );
    const moved = JSON.stringify({ ...record, time: '2026-12-01T22:45:26.124Z' });
    expect(problemsOf(() => parseText(moved))).toMatch(/time: must be the time its key names/);
    expect(
      problemsOf(() => parseText(serializeHistoryRecord(record), 'history/default/web/a.json')),
    ).toMatch(/\(key\): must be history\/<nodegroup>/);
    const notTime = JSON.stringify({ ...record, time: '2026-13-01T22:45:26.123Z' });
    expect(problemsOf(() => parseText(notTime))).toMatch(/time: must be an ISO 8601 UTC time/);
  });

  it('checks the action against the replacement', () => {
    const deleteWithEntry = JSON.stringify({ ...record, action: 'delete' });
    expect(problemsOf(() => parseText(deleteWithEntry))).toMatch(
      /replacement: must be null for a delete/,
    );
    const deployWithout = JSON.stringify({ ...record, replacement: null });
    expect(problemsOf(() => parseText(deployWithout))).toMatch(
      /replacement: must be an entry for a deploy/,
    );
    const same = JSON.stringify({ ...record, replacement: record.replaced });
    expect(problemsOf(() => parseText(same))).toMatch(/must differ from the replaced entry/);
    const unknown = JSON.stringify({ ...record, action: 'undo' });
    expect(problemsOf(() => parseText(unknown))).toMatch(
      /action: must be one of deploy, delete, rollback/,
    );
    const badService = JSON.stringify({ ...record, replacement: { pod: podB, service: 'x' } });
    expect(problemsOf(() => parseText(badService))).toMatch(
      /replacement\.service: must be services\//,
    );
  });

  it('gives a hint that nothing was changed', () => {
    try {
      parseText('{}');
    } catch (err) {
      expect((err as { hint?: string }).hint).toMatch(/nothing was changed/);
      return;
    }
    throw new Error('expected a rejection');
  });
});
