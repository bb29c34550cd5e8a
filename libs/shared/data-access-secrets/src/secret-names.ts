import { DNS1123_LABEL_RULE, isDns1123Label } from '@podmin/util-manifest';
import { ValidationError, type FieldProblem } from '@podmin/util-errors';

/** The reserved path segment of cluster-level system secrets; never a Kubernetes namespace. */
export const SYSTEM_SEGMENT = '_system';

/**
 * The system key holding the log exporter's headers (`setup --otel-logs headers-secret=true`):
 * the one system key users manage (`podmin secret … otel-logs-headers --system`), read by the
 * node before each Fluent Bit start.
 */
export const OTEL_LOGS_HEADERS_KEY = 'otel-logs-headers';

/** Rule of a secret key, for error messages. */
export const SECRET_KEY_RULE =
  'a single path component of at most 253 characters matching [A-Za-z0-9][A-Za-z0-9._-]*';

const SAFE_KEY = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const MAX_KEY_LENGTH = 253;

/** The parts of a workload secret name `/<cluster>/<namespace>/<pod>/<key>`. */
export interface WorkloadSecretName {
  kind: 'workload';
  cluster: string;
  namespace: string;
  pod: string;
  key: string;
}

/** The parts of a system secret name `/<cluster>/_system/<key>`. */
export interface SystemSecretName {
  kind: 'system';
  cluster: string;
  key: string;
}

/** A parsed, valid secret name. */
export type ParsedSecretName = WorkloadSecretName | SystemSecretName;

/** True when `key` is a safe single path component usable as a secret key and file name. */
export function isSafeSecretKey(key: string): boolean {
  return key.length <= MAX_KEY_LENGTH && SAFE_KEY.test(key);
}

function labelProblem(field: string, value: string): FieldProblem[] {
  return isDns1123Label(value)
    ? []
    : [{ field, message: `${JSON.stringify(value)} is invalid; it must be ${DNS1123_LABEL_RULE}` }];
}

function keyProblem(value: string): FieldProblem[] {
  return isSafeSecretKey(value)
    ? []
    : [
        {
          field: 'key',
          message: `${JSON.stringify(value)} is invalid; it must be ${SECRET_KEY_RULE}`,
        },
      ];
}

function fail(subject: string, problems: FieldProblem[]): void {
  if (problems.length > 0)
    throw new ValidationError(subject, problems, { code: 'INVALID_ARGUMENT' });
}

/** Builds `/<cluster>/<namespace>/<pod>/<key>`, validating every component (INVALID_ARGUMENT). */
export function workloadSecretName(parts: Omit<WorkloadSecretName, 'kind'>): string {
  fail('naming a secret', [
    ...labelProblem('cluster', parts.cluster),
    ...labelProblem('namespace', parts.namespace),
    ...labelProblem('pod', parts.pod),
    ...keyProblem(parts.key),
  ]);
  return `/${parts.cluster}/${parts.namespace}/${parts.pod}/${parts.key}`;
}

/** Builds `/<cluster>/_system/<key>`, validating both components (INVALID_ARGUMENT). */
export function systemSecretName(cluster: string, key: string): string {
  fail('naming a system secret', [...labelProblem('cluster', cluster), ...keyProblem(key)]);
  return `/${cluster}/${SYSTEM_SEGMENT}/${key}`;
}

/** Parses and validates a full secret name; INVALID_ARGUMENT listing every bad component. */
export function parseSecretName(name: string): ParsedSecretName {
  const subject = `reading secret name ${JSON.stringify(name)}`;
  const parts = name.split('/');
  if (parts[0] !== '' || (parts.length !== 4 && parts.length !== 5)) {
    fail(subject, [
      {
        field: 'name',
        message: 'must be /<cluster>/<namespace>/<pod>/<key> or /<cluster>/_system/<key>',
      },
    ]);
  }
  const [, cluster = '', second = '', third = '', fourth] = parts;
  if (parts.length === 4) {
    if (second !== SYSTEM_SEGMENT) {
      fail(subject, [
        {
          field: 'name',
          message: `a three-part name must be /<cluster>/${SYSTEM_SEGMENT}/<key>`,
        },
      ]);
    }
    fail(subject, [...labelProblem('cluster', cluster), ...keyProblem(third)]);
    return { kind: 'system', cluster, key: third };
  }
  fail(subject, [
    ...labelProblem('cluster', cluster),
    ...labelProblem('namespace', second),
    ...labelProblem('pod', third),
    ...keyProblem(fourth ?? ''),
  ]);
  return { kind: 'workload', cluster, namespace: second, pod: third, key: fourth ?? '' };
}

/**
 * Validates a listing prefix: "/" followed by zero or more valid name components, each followed
 * by "/" (e.g. `/demo/`, `/demo/default/`, `/demo/_system/`); INVALID_ARGUMENT otherwise.
 */
export function assertSecretPrefix(prefix: string): void {
  const parts = prefix.split('/');
  const inner = parts.slice(1, -1);
  const ok =
    prefix.startsWith('/') &&
    prefix.endsWith('/') &&
    inner.length <= 3 &&
    inner.every((part, i) =>
      i === 0
        ? isDns1123Label(part)
        : i === 1
          ? part === SYSTEM_SEGMENT || isDns1123Label(part)
          : inner[1] !== SYSTEM_SEGMENT && isDns1123Label(part),
    );
  if (!ok) {
    fail(`listing secrets under ${JSON.stringify(prefix)}`, [
      {
        field: 'prefix',
        message: 'must be "/" or /<cluster>/[<namespace>/[<pod>/]] (or /<cluster>/_system/)',
      },
    ]);
  }
}
