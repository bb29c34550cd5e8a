import type { ProblemSink } from './checks';
import { isRecord } from './checks';

/** One field the Kubernetes API server writes, and the empty form kubectl leaves in its output. */
interface ServerField {
  path: readonly string[];
  /** What kubectl writes when it has no value, for the message that refuses a real one. */
  emptyForm: string;
  /** `metadata.generation: 0` is as empty as an absent generation. */
  zeroIsEmpty?: boolean;
}

const METADATA_FIELDS: readonly ServerField[] = [
  { path: ['metadata', 'creationTimestamp'], emptyForm: 'creationTimestamp: null' },
  { path: ['metadata', 'generation'], emptyForm: 'generation: 0', zeroIsEmpty: true },
  { path: ['metadata', 'resourceVersion'], emptyForm: 'resourceVersion: ""' },
  { path: ['metadata', 'uid'], emptyForm: 'uid: ""' },
  { path: ['metadata', 'selfLink'], emptyForm: 'selfLink: ""' },
  { path: ['metadata', 'managedFields'], emptyForm: 'managedFields: []' },
  { path: ['status'], emptyForm: 'status: {}' },
];

/**
 * Server-populated fields by object kind (DESIGN §6.14). `kubectl create … --dry-run=client -o
 * yaml` writes them empty (`creationTimestamp: null`, `status: {}`, a Service's
 * `status: {loadBalancer: {}}`); podmin has no API server to fill them in.
 */
export const SERVER_POPULATED_FIELDS: Readonly<
  Record<'DaemonSet' | 'Service', readonly ServerField[]>
> = {
  DaemonSet: [
    ...METADATA_FIELDS,
    {
      path: ['spec', 'template', 'metadata', 'creationTimestamp'],
      emptyForm: 'creationTimestamp: null',
    },
  ],
  Service: METADATA_FIELDS,
};

/**
 * True for a value that says nothing: null, `""`, and mappings and lists whose every member is
 * itself empty (`{loadBalancer: {}}`); `0` only where `zeroIsEmpty`.
 */
export function isEmptyServerValue(value: unknown, zeroIsEmpty = false): boolean {
  if (value === null || value === '') return true;
  if (zeroIsEmpty && value === 0) return true;
  if (Array.isArray(value)) return value.every((item) => isEmptyServerValue(item));
  if (isRecord(value)) return Object.values(value).every((item) => isEmptyServerValue(item));
  return false;
}

/**
 * Removes the server-populated fields of `object` (a DaemonSet or Service document, changed in
 * place) that are empty, silently; refuses each non-empty one, naming it, and removes it too so
 * the field check after this one does not report it a second time.
 */
export function dropServerPopulatedFields(
  object: Record<string, unknown>,
  kind: 'DaemonSet' | 'Service',
  sink: ProblemSink,
): void {
  for (const field of SERVER_POPULATED_FIELDS[kind]) {
    const parents = field.path.slice(0, -1);
    const leaf = field.path[field.path.length - 1] as string;
    let parent: unknown = object;
    for (const part of parents) parent = isRecord(parent) ? parent[part] : undefined;
    if (!isRecord(parent) || !Object.prototype.hasOwnProperty.call(parent, leaf)) continue;
    const value = parent[leaf];
    delete parent[leaf];
    if (isEmptyServerValue(value, field.zeroIsEmpty === true)) continue;
    sink.add(
      field.path.join('.'),
      `is written by the Kubernetes API server, and podmin has none; remove it (kubectl's empty ${field.emptyForm} is accepted and dropped)`,
    );
  }
}
