import { createHash } from 'node:crypto';
import { PodminError, ValidationError, type FieldProblem } from '@podmin/util-errors';
import { MAX_PAYLOAD_BYTES } from '@podmin/util-manifest';
import { DNS_LABEL } from './key-patterns';
import { findDuplicateKey } from '@podmin/util-oci';
import { SIGNATURE_MEMBER, signatureProblems, type IndexSignature } from './index-signature';

/** Object key of the single cluster-wide desired-state commit. */
export const INDEX_KEY = 'deployments/index.json';

/** Upper bound for reading the index; it only holds paths. */
export const MAX_INDEX_BYTES = 8 * 1024 * 1024;

/** Upper bound for reading one Pod or Service payload: the manifest library's, which deploy checks. */
export { MAX_PAYLOAD_BYTES };

/** One deployment in the index: content-addressed Pod payload and optional Service payload. */
export interface IndexEntry {
  pod: string;
  service?: string;
}

/** The desired-state index: `<nodegroup>/<deployment>` → entry. */
export type DesiredIndex = Readonly<Record<string, IndexEntry>>;

const HEX128 = /^[0-9a-f]{128}$/;
const SERVICE_KEY = /^services\/([^/]+)\/([^/]+)\/sha512\/([0-9a-f]{128})\.yaml$/;

/** Lowercase hex SHA-512 of the given bytes. */
export function sha512Hex(data: Buffer | string): string {
  return createHash('sha512').update(data).digest('hex');
}

/** Content-addressed key of a Pod payload for a NodeGroup. */
export function podPayloadKey(nodegroup: string, payload: Buffer | string): string {
  return `nodegroups/${nodegroup}/pods/sha512/${sha512Hex(payload)}.yaml`;
}

/** Content-addressed key of a Service payload. */
export function servicePayloadKey(
  namespace: string,
  service: string,
  payload: Buffer | string,
): string {
  return `services/${namespace}/${service}/sha512/${sha512Hex(payload)}.yaml`;
}

/** Index key of a deployment. */
export function deploymentKey(nodegroup: string, name: string): string {
  return `${nodegroup}/${name}`;
}

/** A parsed `<nodegroup>/<deployment>` index key. */
export interface DeploymentRef {
  nodegroup: string;
  name: string;
}

// Two DNS-1123 labels (at most 63 characters each) joined by one "/", in one pass: the index
// of a large fleet holds tens of thousands of keys and every command reads all of them.
const DEPLOYMENT_KEY = new RegExp(`^(${DNS_LABEL})\\/(${DNS_LABEL})$`);

/** Splits an index key into NodeGroup and deployment name. */
export function parseDeploymentKey(key: string): DeploymentRef {
  const m = DEPLOYMENT_KEY.exec(key);
  if (m === null) {
    throw new ValidationError('reading deployments/index.json', [
      {
        field: `key ${JSON.stringify(key)}`,
        message: 'must be <nodegroup>/<deployment> with DNS-1123 labels',
      },
    ]);
  }
  return { nodegroup: m[1] as string, name: m[2] as string };
}

/** The digest and owner named by a Pod payload key. */
export interface PodKeyParts {
  nodegroup: string;
  digest: string;
}

/** The digest and owner named by a Service payload key. */
export interface ServiceKeyParts {
  namespace: string;
  service: string;
  digest: string;
}

// Tested without captures, then cut by position: every index entry has a Pod key, and a
// capturing match was the largest single cost of reading a 10,000-entry index.
const POD_KEY = /^nodegroups\/[^/]+\/pods\/sha512\/[0-9a-f]{128}\.yaml$/;
const POD_KEY_HEAD = 'nodegroups/'.length;
const POD_KEY_TAIL = '.yaml'.length;

/** Parses a Pod payload key, or undefined when it is not one. */
export function parsePodKey(key: string): PodKeyParts | undefined {
  if (!POD_KEY.test(key)) return undefined;
  return {
    nodegroup: key.slice(POD_KEY_HEAD, key.indexOf('/', POD_KEY_HEAD)),
    digest: key.slice(key.length - POD_KEY_TAIL - 128, key.length - POD_KEY_TAIL),
  };
}

/** Parses a Service payload key, or undefined when it is not one. */
export function parseServiceKey(key: string): ServiceKeyParts | undefined {
  const m = SERVICE_KEY.exec(key);
  return m
    ? { namespace: m[1] as string, service: m[2] as string, digest: m[3] as string }
    : undefined;
}

/** Checks that payload bytes hash to the digest named in their key. */
export function verifyPayload(key: string, body: Buffer): void {
  const digest = parsePodKey(key)?.digest ?? parseServiceKey(key)?.digest;
  if (!digest || !HEX128.test(digest)) {
    throw new PodminError('INTERNAL', `verifying ${key}: not a content-addressed payload key`);
  }
  const actual = sha512Hex(body);
  if (actual !== digest) {
    throw new PodminError(
      'INTERNAL',
      `verifying ${key}: content hashes to sha512:${actual.slice(0, 16)}…, not the digest in its path`,
      {
        hint: 'the object was modified after it was written; redeploy to write a fresh payload',
      },
    );
  }
}

/** Strictly parses and validates index bytes (duplicate keys, unknown fields and bad paths are errors). */
export function parseIndex(body: Buffer | string): DesiredIndex {
  return parseSignedIndex(body).index;
}

/** An index as read: its entries and the deployer's signature it carries, if any. */
export interface SignedIndex {
  index: DesiredIndex;
  signature?: IndexSignature;
}

/**
 * Strictly parses index bytes like {@link parseIndex}, keeping the signature member apart from
 * the entries (its shape checked here; whether it verifies is util-trust's question).
 */
export function parseSignedIndex(body: Buffer | string): SignedIndex {
  const text = typeof body === 'string' ? body : body.toString('utf8');
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new ValidationError(
      'reading deployments/index.json',
      [{ field: '(document)', message: 'is not valid JSON' }],
      {
        cause: err,
      },
    );
  }
  const problems: FieldProblem[] = [];
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ValidationError('reading deployments/index.json', [
      { field: '(document)', message: 'must be a JSON object' },
    ]);
  }
  const out: Record<string, IndexEntry> = {};
  const entries = Object.entries(raw as Record<string, unknown>);
  // Keys the parsed value holds, counted on the way (see keyTokens).
  let keys = entries.length;
  let signature: IndexSignature | undefined;
  for (const [key, value] of entries) {
    if (key === SIGNATURE_MEMBER) {
      keys += keysIn(value);
      const invalid = signatureProblems(value);
      if (invalid.length === 0) signature = value as IndexSignature;
      else problems.push(...invalid);
      continue;
    }
    let ref: DeploymentRef;
    try {
      ref = parseDeploymentKey(key);
    } catch {
      problems.push({
        field: key,
        message: 'key must be <nodegroup>/<deployment> with DNS-1123 labels',
      });
      continue;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      problems.push({ field: key, message: 'must be an object with "pod" and optional "service"' });
      continue;
    }
    const entry = value as Record<string, unknown>;
    for (const field of Object.keys(entry)) {
      keys += 1 + keysIn(entry[field]);
      if (field !== 'pod' && field !== 'service')
        problems.push({
          field: `${key}.${field}`,
          message: 'unknown field; allowed: pod, service',
        });
    }
    const pod = entry['pod'];
    const podParts = typeof pod === 'string' ? parsePodKey(pod) : undefined;
    if (typeof pod !== 'string' || !podParts || podParts.nodegroup !== ref.nodegroup) {
      problems.push({
        field: `${key}.pod`,
        message: `must be nodegroups/${ref.nodegroup}/pods/sha512/<128 hex>.yaml`,
      });
      continue;
    }
    const service = entry['service'];
    if (service !== undefined && (typeof service !== 'string' || !parseServiceKey(service))) {
      problems.push({
        field: `${key}.service`,
        message: 'must be services/<namespace>/<service>/sha512/<128 hex>.yaml',
      });
      continue;
    }
    out[key] = service === undefined ? { pod } : { pod, service };
  }
  // Entries that are not objects were not counted, so their keys make a mismatch too.
  if (keyTokens(text) !== keys) assertNoDuplicateKeys(text);
  problems.push(...serviceOwnershipProblems(out));
  if (problems.length > 0) throw new ValidationError('reading deployments/index.json', problems);
  return signature === undefined ? { index: out } : { index: out, signature };
}

// Every reader enforces one owner per namespaced Service, not only the write path: an index
// edited by another tool must not make two deployments publish one Service identity.
function serviceOwnershipProblems(index: DesiredIndex): FieldProblem[] {
  const owners = new Map<string, string[]>();
  for (const key of Object.keys(index)) {
    const service = index[key]?.service;
    const parts = service === undefined ? undefined : parseServiceKey(service);
    if (!parts) continue;
    const identity = `${parts.namespace}/${parts.service}`;
    const list = owners.get(identity);
    if (list === undefined) owners.set(identity, [key]);
    else list.push(key);
  }
  const problems: FieldProblem[] = [];
  for (const [identity, unsorted] of [...owners].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (unsorted.length < 2) continue;
    const keys = unsorted.sort();
    problems.push({
      field: `${keys.slice(1).join(', ')}.service`,
      message: `Service ${identity} is owned by ${keys.join(' and ')}; exactly one index entry may own a namespaced Service`,
    });
  }
  return problems;
}

/** Canonical index bytes: keys sorted, two-space JSON, trailing newline. */
export function serializeIndex(index: DesiredIndex): string {
  const sorted: Record<string, IndexEntry> = {};
  for (const key of Object.keys(index).sort()) {
    const entry = index[key] as IndexEntry;
    sorted[key] =
      entry.service === undefined ? { pod: entry.pod } : { pod: entry.pod, service: entry.service };
  }
  return JSON.stringify(sorted, null, 2) + '\n';
}

/** Raised when a Service identity is already owned by another index entry. */
export class ServiceOwnedError extends PodminError {
  constructor(service: string, owner: string) {
    super(
      'ALREADY_EXISTS',
      `deploying Service ${service}: it is already owned by deployment ${owner}`,
      {
        hint: `delete ${owner} first, or give this deployment's Service another name`,
      },
    );
  }
}

/** Index with `key` set to `entry`; enforces one owner per namespaced Service across the index. */
export function withDeployment(index: DesiredIndex, key: string, entry: IndexEntry): DesiredIndex {
  const svc = entry.service ? parseServiceKey(entry.service) : undefined;
  if (svc) {
    for (const [otherKey, other] of Object.entries(index)) {
      const o = other.service ? parseServiceKey(other.service) : undefined;
      if (otherKey !== key && o && o.namespace === svc.namespace && o.service === svc.service) {
        throw new ServiceOwnedError(`${svc.namespace}/${svc.service}`, otherKey);
      }
    }
  }
  return { ...index, [key]: entry };
}

/** Index without `key`. */
export function withoutDeployment(index: DesiredIndex, key: string): DesiredIndex {
  const next: Record<string, IndexEntry> = { ...index };
  delete next[key];
  return next;
}

/** True when both entries name the same payloads. */
export function sameEntry(a: IndexEntry | undefined, b: IndexEntry): boolean {
  return a !== undefined && a.pod === b.pod && a.service === b.service;
}

// JSON.parse keeps the last of duplicate keys silently. In text JSON.parse accepted, every ":"
// outside a string separates one object key from its value, so the text has a duplicate key
// exactly when it holds more of them than the parsed value has keys. Counting them is a few
// milliseconds at 10,000 entries; the scanner below, which names the duplicate, runs only then.
function keyTokens(text: string): number {
  let count = 0;
  let i = 0;
  for (;;) {
    const quote = text.indexOf('"', i);
    const end = quote === -1 ? text.length : quote;
    for (let c = text.indexOf(':', i); c !== -1 && c < end; c = text.indexOf(':', c + 1)) count++;
    if (quote === -1) return count;
    // The closing quote: the next one not escaped by an odd run of backslashes.
    let close = text.indexOf('"', quote + 1);
    for (;;) {
      let slashes = 0;
      while (text.charCodeAt(close - 1 - slashes) === 92) slashes++;
      if (slashes % 2 === 0) break;
      close = text.indexOf('"', close + 1);
    }
    i = close + 1;
  }
}

function keysIn(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  let count = 0;
  if (Array.isArray(value)) {
    for (const item of value as unknown[]) count += keysIn(item);
    return count;
  }
  for (const key in value) count += 1 + keysIn((value as Record<string, unknown>)[key]);
  return count;
}

// A strict reader refuses duplicate keys, naming the first one found (util-oci's strict JSON reader).
function assertNoDuplicateKeys(text: string): void {
  const key = findDuplicateKey(text);
  if (key !== undefined) {
    throw new ValidationError('reading deployments/index.json', [
      { field: key, message: 'duplicate key' },
    ]);
  }
}
