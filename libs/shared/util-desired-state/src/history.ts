import { PodminError, ValidationError, type FieldProblem } from '@podmin/util-errors';
import {
  parseDeploymentKey,
  parsePodKey,
  parseServiceKey,
  sameEntry,
  type IndexEntry,
} from './desired-index';
import { findDuplicateKey } from '@podmin/util-oci';

/** Characters of a revision: the first 12 hex of the Pod payload's SHA-512. */
export const REVISION_LENGTH = 12;

/**
 * The short, stable id of an index entry: the first {@link REVISION_LENGTH} hex characters of
 * its Pod payload's SHA-512 (the content address in its `pod` key). Node receipts and history
 * both name revisions this way, so the two can be compared.
 */
export function revisionOf(entry: IndexEntry): string {
  const parts = parsePodKey(entry.pod);
  if (!parts) {
    throw new PodminError('INTERNAL', `naming the revision of ${entry.pod}: not a Pod payload key`);
  }
  return parts.digest.slice(0, REVISION_LENGTH);
}

/** Upper bound for reading one history record; a record holds two entries and a time. */
export const MAX_HISTORY_RECORD_BYTES = 16 * 1024;

/** What made a history record: the command whose index commit replaced an entry. */
export type HistoryAction = 'deploy' | 'delete' | 'rollback';

const ACTIONS: readonly HistoryAction[] = ['deploy', 'delete', 'rollback'];

/**
 * One replaced index entry, written create-only after the index commit that replaced it.
 * Records are immutable and each has its own key, so concurrent commits never contend on one.
 */
export interface HistoryRecord {
  /** The index key, `<nodegroup>/<name>`. */
  deployment: string;
  action: HistoryAction;
  /** When the replacing commit was made: ISO 8601 UTC with milliseconds. */
  time: string;
  /** The entry the commit replaced. */
  replaced: IndexEntry;
  /** The entry that replaced it; null when the commit deleted the deployment. */
  replacement: IndexEntry | null;
}

const RECORD_FIELDS = ['deployment', 'action', 'time', 'replaced', 'replacement'] as const;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
// history/<nodegroup>/<name>/<YYYYMMDDTHHMMSSmmmZ>-<16 hex>.json: the stamp sorts by time in
// key order (listings are lexicographic), the random suffix keeps concurrent writers apart.
const HISTORY_KEY = /^history\/([^/]+)\/([^/]+)\/(\d{8}T\d{9}Z)-([0-9a-f]{16})\.json$/;
const ID = /^[0-9a-f]{16}$/;

/** Key prefix under which one deployment's history records live (with the trailing slash). */
export function historyPrefix(nodegroup: string, name: string): string {
  return `history/${nodegroup}/${name}/`;
}

/** The time stamp of a history key: `time` as `YYYYMMDDTHHMMSSmmmZ`. */
function stampOf(time: string): string {
  return time.replace(/[-:.]/g, '');
}

/** Key of one history record: the deployment's prefix, the record's time, then a random id. */
export function historyKey(nodegroup: string, name: string, time: Date, id: string): string {
  if (!ID.test(id)) {
    throw new PodminError('INTERNAL', `naming a history record: id ${id} is not 16 hex characters`);
  }
  return `${historyPrefix(nodegroup, name)}${stampOf(time.toISOString())}-${id}.json`;
}

/** The parts of a history key. */
export interface HistoryKeyParts {
  nodegroup: string;
  name: string;
  /** `YYYYMMDDTHHMMSSmmmZ`. */
  stamp: string;
  id: string;
}

/** Parses a history record key, or undefined when it is not one. */
export function parseHistoryKey(key: string): HistoryKeyParts | undefined {
  const m = HISTORY_KEY.exec(key);
  if (!m) return undefined;
  return {
    nodegroup: m[1] as string,
    name: m[2] as string,
    stamp: m[3] as string,
    id: m[4] as string,
  };
}

function entryJson(entry: IndexEntry): IndexEntry {
  return entry.service === undefined
    ? { pod: entry.pod }
    : { pod: entry.pod, service: entry.service };
}

/** Canonical bytes of a history record: fixed field order, two-space JSON, trailing newline. */
export function serializeHistoryRecord(record: HistoryRecord): string {
  return (
    JSON.stringify(
      {
        deployment: record.deployment,
        action: record.action,
        time: record.time,
        replaced: entryJson(record.replaced),
        replacement: record.replacement === null ? null : entryJson(record.replacement),
      },
      null,
      2,
    ) + '\n'
  );
}

const HINT =
  'the object was not written by podmin or was damaged; restore or remove it, then retry (nothing was changed)';

/**
 * Strictly parses the history record stored at `key`: valid UTF-8 JSON without duplicate keys
 * or trailing data, exactly the record's fields, entries as the index allows them for the
 * key's NodeGroup, and a deployment and time that match the key.
 */
export function parseHistoryRecord(key: string, body: Buffer): HistoryRecord {
  const subject = `reading history record ${key}`;
  const fail = (problems: FieldProblem[], cause?: unknown): never => {
    throw new ValidationError(subject, problems, {
      hint: HINT,
      ...(cause === undefined ? {} : { cause }),
    });
  };
  const parts = parseHistoryKey(key);
  if (!parts) {
    fail([
      {
        field: '(key)',
        message: 'must be history/<nodegroup>/<name>/<YYYYMMDDTHHMMSSmmmZ>-<16 hex>.json',
      },
    ]);
  }
  const { nodegroup, name, stamp } = parts as HistoryKeyParts;
  if (body.length > MAX_HISTORY_RECORD_BYTES) {
    fail([{ field: '(document)', message: `is over ${MAX_HISTORY_RECORD_BYTES} bytes` }]);
  }
  let text = '';
  let raw: unknown;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body);
    // JSON.parse refuses trailing data after the one value.
    raw = JSON.parse(text);
  } catch (err) {
    fail([{ field: '(document)', message: 'is not valid UTF-8 JSON' }], err);
  }
  const duplicate = findDuplicateKey(text);
  if (duplicate !== undefined) fail([{ field: duplicate, message: 'duplicate key' }]);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    fail([{ field: '(document)', message: 'must be a JSON object' }]);
  }
  const record = raw as Record<string, unknown>;
  const problems: FieldProblem[] = [];
  for (const field of Object.keys(record)) {
    if (!(RECORD_FIELDS as readonly string[]).includes(field)) {
      problems.push({ field, message: `unknown field; allowed: ${RECORD_FIELDS.join(', ')}` });
    }
  }
  for (const field of RECORD_FIELDS) {
    if (!(field in record)) problems.push({ field, message: 'is required' });
  }
  const deployment = record['deployment'];
  const expected = `${nodegroup}/${name}`;
  if (deployment !== expected) {
    problems.push({
      field: 'deployment',
      message: `must be ${expected}, the deployment its key names`,
    });
  } else {
    try {
      parseDeploymentKey(expected);
    } catch {
      problems.push({
        field: 'deployment',
        message: 'must be <nodegroup>/<name> with DNS-1123 labels',
      });
    }
  }
  const action = record['action'];
  if (typeof action !== 'string' || !(ACTIONS as readonly string[]).includes(action)) {
    problems.push({ field: 'action', message: `must be one of ${ACTIONS.join(', ')}` });
  }
  const time = record['time'];
  if (typeof time !== 'string' || !ISO_TIME.test(time) || !isRealTime(time)) {
    problems.push({
      field: 'time',
      message: 'must be an ISO 8601 UTC time like 2026-01-31T12:00:00.000Z',
    });
  } else if (stampOf(time) !== stamp) {
    problems.push({ field: 'time', message: `must be the time its key names (${stamp})` });
  }
  const replaced = parseEntry('replaced', record['replaced'], nodegroup, problems);
  let replacement: IndexEntry | null | undefined = null;
  if (record['replacement'] !== null) {
    replacement = parseEntry('replacement', record['replacement'], nodegroup, problems);
  }
  if (action === 'delete' && replacement !== null) {
    problems.push({ field: 'replacement', message: 'must be null for a delete' });
  }
  if ((action === 'deploy' || action === 'rollback') && replacement === null) {
    problems.push({ field: 'replacement', message: `must be an entry for a ${action}` });
  }
  if (replaced && replacement && sameEntry(replaced, replacement)) {
    problems.push({ field: 'replacement', message: 'must differ from the replaced entry' });
  }
  if (problems.length > 0 || !replaced || replacement === undefined) return fail(problems);
  return {
    deployment: expected,
    action: action as HistoryAction,
    time: time as string,
    replaced,
    replacement,
  };
}

function isRealTime(time: string): boolean {
  const date = new Date(time);
  return !Number.isNaN(date.getTime()) && date.toISOString() === time;
}

function parseEntry(
  field: string,
  value: unknown,
  nodegroup: string,
  problems: FieldProblem[],
): IndexEntry | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    problems.push({ field, message: 'must be an object with "pod" and optional "service"' });
    return undefined;
  }
  const entry = value as Record<string, unknown>;
  let ok = true;
  for (const key of Object.keys(entry)) {
    if (key !== 'pod' && key !== 'service') {
      problems.push({ field: `${field}.${key}`, message: 'unknown field; allowed: pod, service' });
      ok = false;
    }
  }
  const pod = entry['pod'];
  if (typeof pod !== 'string' || parsePodKey(pod)?.nodegroup !== nodegroup) {
    problems.push({
      field: `${field}.pod`,
      message: `must be nodegroups/${nodegroup}/pods/sha512/<128 hex>.yaml`,
    });
    ok = false;
  }
  const service = entry['service'];
  if (service !== undefined && (typeof service !== 'string' || !parseServiceKey(service))) {
    problems.push({
      field: `${field}.service`,
      message: 'must be services/<namespace>/<service>/sha512/<128 hex>.yaml',
    });
    ok = false;
  }
  if (!ok) return undefined;
  return service === undefined
    ? { pod: pod as string }
    : { pod: pod as string, service: service as string };
}
