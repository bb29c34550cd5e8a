import { ValidationError } from '@podmin/util-errors';
import type { FieldProblem } from '@podmin/util-errors';
import { ROLLOUT_ANNOTATION, strategyOf, surges } from '@podmin/util-rollout';
import type { RolloutStrategy } from '@podmin/util-rollout';
import {
  ProblemSink,
  checkKeys,
  childPath,
  describeType,
  entryPath,
  expectDnsLabel,
  expectList,
  expectRecord,
  isRecord,
} from './checks';
import { IMAGE_TAGS_ANNOTATION } from './constants';
import { checkImageTagsAnnotation } from './image-pin';
import { CONTAINER_FIELDS, POD_SPEC_FIELDS } from './kubernetes-fields';
import { hostBindingPaths } from './pod-spec';
import { checkObjectMeta, checkService } from './service';
import { parseYamlDocuments } from './yaml';

/** A content-addressed Pod payload read back from the bucket, validated. */
export interface PodPayload {
  name: string;
  namespace: string;
  /** The Pod object exactly as parsed. */
  pod: Record<string, unknown>;
}

/** A content-addressed Service payload read back from the bucket, validated. */
export interface ServicePayload {
  name: string;
  namespace: string;
  /** The Service object as the validator returns it (namespace, protocol, targetPort filled in). */
  object: Record<string, unknown>;
}

// Fields `buildDeployment` never emits in a Pod: a payload carrying them was not written by podmin.
const NOT_IN_PAYLOADS = [
  'nodeSelector',
  'nodeName',
  'affinity',
  'schedulerName',
  'topologySpreadConstraints',
  'ephemeralContainers',
];

/**
 * Strictly parses a Pod payload (one YAML document, same strict YAML rules as manifests) and
 * checks the shape `buildDeployment` emits: `v1` Pod, known PodSpec and Container fields,
 * DNS-1123 names, string images, no scheduling fields, a `podmin.dev/rollout` annotation (when
 * present) that `strategyOf` reads, and no host ports or host network with a surging strategy.
 */
export function parsePodPayload(text: string, source: string): PodPayload {
  const problems: FieldProblem[] = [];
  const value = singleDocument(text, source, problems);
  const sink = new ProblemSink(problems, 'Pod');
  let name: string | undefined;
  let namespace: string | undefined = 'default';
  let strategy: RolloutStrategy | undefined;
  if (value !== undefined) {
    checkKeys(value, ['apiVersion', 'kind', 'metadata', 'spec'], '', sink);
    expectKind(value, 'Pod', sink);
    const metadata = expectRecord(value.metadata, 'metadata', sink);
    if (metadata !== undefined) {
      checkKeys(metadata, ['name', 'namespace', 'labels', 'annotations'], 'metadata', sink);
      name = expectDnsLabel(metadata.name, 'metadata.name', sink);
      const meta = checkObjectMeta(metadata, sink);
      if (metadata.namespace !== undefined) namespace = meta.namespace;
      if (metadata.annotations !== undefined) {
        strategy = checkRolloutAnnotation(meta.annotations, sink);
        const tags = meta.annotations?.[IMAGE_TAGS_ANNOTATION];
        if (tags !== undefined) {
          const spec = isRecord(value.spec) ? value.spec : undefined;
          const path = entryPath('metadata.annotations', IMAGE_TAGS_ANNOTATION);
          checkImageTagsAnnotation(tags, spec, path, (at, why) => sink.add(at, why));
        }
      }
    }
    const spec = expectRecord(value.spec, 'spec', sink);
    if (spec !== undefined) {
      checkPayloadPodSpec(spec, sink);
      if (strategy !== undefined && surges(strategy)) checkNoHostBindings(spec, strategy, sink);
    }
  }
  if (problems.length > 0 || value === undefined || name === undefined || namespace === undefined) {
    throw new ValidationError(`reading Pod payload ${source}`, problems);
  }
  return { name, namespace, pod: value };
}

/**
 * Strictly parses a Service payload (one YAML document) and validates it with the same
 * Service-subset rules `buildDeployment` applies to manifests.
 */
export function parseServicePayload(text: string, source: string): ServicePayload {
  const problems: FieldProblem[] = [];
  const value = singleDocument(text, source, problems);
  const sink = new ProblemSink(problems, 'Service');
  let checked: ReturnType<typeof checkService> = undefined;
  if (value !== undefined) {
    expectKind(value, 'Service', sink);
    // Read without its DaemonSet: the selector-versus-template warning belongs to deploy.
    checked = checkService(value, undefined, undefined, sink);
  }
  if (problems.length > 0 || checked === undefined) {
    throw new ValidationError(`reading Service payload ${source}`, problems);
  }
  return { name: checked.name, namespace: checked.namespace, object: checked.object };
}

function singleDocument(
  text: string,
  source: string,
  problems: FieldProblem[],
): Record<string, unknown> | undefined {
  const documents = parseYamlDocuments(text, source);
  const [only] = documents;
  if (documents.length !== 1 || only === undefined) {
    problems.push({
      field: source,
      message: `holds ${documents.length} YAML documents; a payload is exactly one`,
    });
    return undefined;
  }
  if (!isRecord(only.value)) {
    problems.push({ field: source, message: `is ${describeType(only.value)}, not a mapping` });
    return undefined;
  }
  return only.value;
}

function expectKind(value: Record<string, unknown>, kind: string, sink: ProblemSink): void {
  if (value.apiVersion !== 'v1' || value.kind !== kind) {
    sink.add(
      'kind',
      `must be apiVersion v1 with kind ${kind}, not ${JSON.stringify(value.apiVersion ?? null)} ${JSON.stringify(value.kind ?? null)}`,
    );
  }
}

/** The strategy the payload carries, or undefined when it carries none or a malformed one (recorded). */
function checkRolloutAnnotation(
  annotations: Record<string, string> | undefined,
  sink: ProblemSink,
): RolloutStrategy | undefined {
  if (annotations?.[ROLLOUT_ANNOTATION] === undefined) return undefined;
  try {
    return strategyOf(annotations);
  } catch (err) {
    sink.add(
      entryPath('metadata.annotations', ROLLOUT_ANNOTATION),
      `is not a rollout strategy podmin writes: ${err instanceof Error ? err.message : String(err)}`,
    );
    return undefined;
  }
}

/** A surging Pod would meet its own old copy on the node's ports; buildDeployment refuses it too. */
function checkNoHostBindings(
  spec: Record<string, unknown>,
  strategy: RolloutStrategy,
  sink: ProblemSink,
): void {
  const why = `cannot be used with a surging rollout (${ROLLOUT_ANNOTATION} maxSurge ${JSON.stringify(strategy.maxSurge)}): the old and the new Pod would both need the node's ports`;
  for (const path of hostBindingPaths(spec, 'spec')) sink.add(path, why);
}

function checkPayloadPodSpec(spec: Record<string, unknown>, sink: ProblemSink): void {
  checkKeys(spec, POD_SPEC_FIELDS, 'spec', sink, 'is not a Kubernetes v1 PodSpec field');
  for (const field of NOT_IN_PAYLOADS) {
    if (spec[field] !== undefined) {
      sink.add(childPath('spec', field), 'is never part of a podmin Pod payload');
    }
  }
  for (const list of ['containers', 'initContainers'] as const) {
    const listPath = childPath('spec', list);
    if (spec[list] === undefined) {
      if (list === 'containers') sink.add(listPath, 'is required; list at least one container');
      continue;
    }
    const items = expectList(spec[list], listPath, sink);
    if (items !== undefined && list === 'containers' && items.length === 0) {
      sink.add(listPath, 'must list at least one container');
    }
    items?.forEach((item, index) => {
      const path = `${listPath}[${index}]`;
      const container = expectRecord(item, path, sink);
      if (container === undefined) return;
      checkKeys(container, CONTAINER_FIELDS, path, sink, 'is not a Kubernetes v1 Container field');
      expectDnsLabel(container.name, childPath(path, 'name'), sink);
      if (typeof container.image !== 'string' || container.image === '') {
        sink.add(childPath(path, 'image'), 'must be a non-empty image reference');
      }
    });
  }
  if (spec.volumes !== undefined) {
    expectList(spec.volumes, 'spec.volumes', sink)?.forEach((item, index) => {
      const path = `spec.volumes[${index}]`;
      const volume = expectRecord(item, path, sink);
      if (volume !== undefined) expectDnsLabel(volume.name, childPath(path, 'name'), sink);
    });
  }
}
