import { createHash } from 'node:crypto';
import { PodminError, ValidationError, type FieldProblem } from '@podmin/util-errors';
import { MAX_PAYLOAD_BYTES, isDns1123Label } from '@podmin/util-manifest';
import { findDuplicateKey } from './strict-json';

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
const POD_KEY = /^nodegroups\/([^/]+)\/pods\/sha512\/([0-9a-f]{128})\.yaml$/;
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

/** Splits an index key into NodeGroup and deployment name. */
export function parseDeploymentKey(key: string): DeploymentRef {
  const parts = key.split('/');
  const [nodegroup, name] = parts;
  if (
    parts.length !== 2 ||
    !nodegroup ||
    !name ||
    !isDns1123Label(nodegroup) ||
    !isDns1123Label(name)
  ) {
    throw new ValidationError('reading deployments/index.json', [
      {
        field: `key ${JSON.stringify(key)}`,
        message: 'must be <nodegroup>/<deployment> with DNS-1123 labels',
      },
    ]);
  }
  return { nodegroup, name };
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

/** Parses a Pod payload key, or undefined when it is not one. */
export function parsePodKey(key: string): PodKeyParts | undefined {
  const m = POD_KEY.exec(key);
  return m ? { nodegroup: m[1] as string, digest: m[2] as string } : undefined;
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
  assertNoDuplicateKeys(text);
  const problems: FieldProblem[] = [];
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ValidationError('reading deployments/index.json', [
      { field: '(document)', message: 'must be a JSON object' },
    ]);
  }
  const out: Record<string, IndexEntry> = {};
  for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
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
  problems.push(...serviceOwnershipProblems(out));
  if (problems.length > 0) throw new ValidationError('reading deployments/index.json', problems);
  return out;
}

// Every reader enforces one owner per namespaced Service, not only the write path: an index
// edited by another tool must not make two deployments publish one Service identity.
function serviceOwnershipProblems(index: DesiredIndex): FieldProblem[] {
  const owners = new Map<string, string[]>();
  for (const key of Object.keys(index).sort()) {
    const service = index[key]?.service;
    const parts = service === undefined ? undefined : parseServiceKey(service);
    if (!parts) continue;
    const identity = `${parts.namespace}/${parts.service}`;
    owners.set(identity, [...(owners.get(identity) ?? []), key]);
  }
  const problems: FieldProblem[] = [];
  for (const [identity, keys] of owners) {
    if (keys.length < 2) continue;
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

function assertNoDuplicateKeys(text: string): void {
  const key = findDuplicateKey(text);
  if (key !== undefined) {
    throw new ValidationError('reading deployments/index.json', [
      { field: key, message: 'duplicate key' },
    ]);
  }
}
