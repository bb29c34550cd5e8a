import { PodminError, ValidationError } from '@podmin/util-errors';
import type { FieldProblem } from '@podmin/util-errors';
import {
  DEFAULT_STRATEGY,
  PROGRESS_DEADLINE_ANNOTATION,
  ROLLOUT_ANNOTATION,
  isIntOrPercent,
  parseDurationSeconds,
  serializeStrategy,
  surges,
} from '@podmin/util-rollout';
import type { RolloutStrategy } from '@podmin/util-rollout';
import {
  ProblemSink,
  checkKeys,
  describeType,
  entryPath,
  expectDnsLabel,
  expectInteger,
  expectRecord,
  expectStringMap,
  isRecord,
} from './checks';
import {
  AWS_PARAMETER_STORE_ANNOTATION,
  AWS_SECRETS_MANAGER_ANNOTATION,
  MAX_PAYLOAD_BYTES,
  RESERVED_POD_ANNOTATIONS,
  SERVICE_ANNOTATION,
} from './constants';
import { checkImageOverrides } from './flags';
import type { ImageOverrides } from './flags';
import { checkPodSpec } from './pod-spec';
import { dropServerPopulatedFields } from './server-fields';
import { checkNamespace, checkSelectorSubset, checkService } from './service';
import type { CheckedService } from './service';
import { parseYamlDocuments, stringifyCanonical, yamlSizeBound } from './yaml';

/** Options for {@link buildDeployment}: where the text came from and what the command line requires. */
export interface BuildOptions {
  /** File name used in messages. */
  source: string;
  /** `deploy <name>`: metadata.name must equal it. */
  name?: string;
  /** `--nodegroup/-g`: the template's NodeGroup selector must equal it. */
  nodegroup?: string;
  /** `--image` overrides applied to the template's containers. */
  images?: ImageOverrides;
  /** `--service` with `--file`: the stream must contain a Service. */
  requireService?: boolean;
}

/** The canonical Service emitted with a deployment. */
export interface DeploymentService {
  name: string;
  namespace: string;
  object: Record<string, unknown>;
  /** `stringifyCanonical(object)`. */
  yaml: string;
}

/** A validated deployment: the Pod extracted from the DaemonSet and its optional Service. */
export interface Deployment {
  name: string;
  namespace: string;
  nodegroup: string;
  pod: Record<string, unknown>;
  /** `stringifyCanonical(pod)`, the content-addressed payload. */
  podYaml: string;
  service?: DeploymentService;
  /**
   * The resolved update strategy (defaults filled in), also carried by the Pod as the
   * `podmin.dev/rollout` annotation.
   */
  strategy: RolloutStrategy;
  /** Findings that do not stop validation or a deploy; the CLI shows them on stderr. */
  warnings: string[];
}

const SAFE_KEY = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const STREAM_RULE =
  'a deployment stream holds exactly one apps/v1 DaemonSet and at most one v1 Service';

interface CheckedDaemonSet {
  name: string | undefined;
  namespace: string | undefined;
  nodegroup: string | undefined;
  labels: Record<string, string> | undefined;
  annotations: Record<string, string>;
  podSpec: Record<string, unknown> | undefined;
  strategy: RolloutStrategy;
}

/**
 * Validates a DaemonSet (+ optional Service) stream and extracts the static Pod: NodeGroup
 * selector removed, images overridden and resolved, pull policy defaulted, identity mounted.
 */
export function buildDeployment(text: string, opts: BuildOptions): Deployment {
  const documents = parseYamlDocuments(text, opts.source);
  const problems: FieldProblem[] = [];
  let daemonSet: Record<string, unknown> | undefined;
  let service: Record<string, unknown> | undefined;

  for (const doc of documents) {
    const where = `${opts.source}:${doc.line}`;
    if (!isRecord(doc.value)) {
      problems.push({
        field: where,
        message: `document is ${describeType(doc.value)}; ${STREAM_RULE}`,
      });
      continue;
    }
    const { apiVersion, kind } = doc.value;
    if (kind === 'DaemonSet' && apiVersion === 'apps/v1') {
      if (daemonSet === undefined) {
        daemonSet = doc.value;
      } else {
        problems.push({ field: where, message: `second DaemonSet; ${STREAM_RULE}` });
      }
    } else if (kind === 'Service' && apiVersion === 'v1') {
      if (service === undefined) {
        service = doc.value;
      } else {
        problems.push({ field: where, message: `second Service; ${STREAM_RULE}` });
      }
    } else {
      problems.push({
        field: where,
        message: `apiVersion ${showValue(apiVersion)} with kind ${showValue(kind)} is not supported; ${STREAM_RULE}`,
      });
    }
  }
  if (daemonSet === undefined) {
    problems.push({ field: opts.source, message: `contains no apps/v1 DaemonSet; ${STREAM_RULE}` });
  }
  if (opts.requireService === true && service === undefined) {
    problems.push({
      field: '--service',
      message: `${opts.source} defines no v1 Service; with --file, --service requires the manifest to contain one`,
    });
  }

  // kubectl's empty server-populated fields are dropped before the field checks (DESIGN §6.14).
  if (daemonSet !== undefined) {
    dropServerPopulatedFields(daemonSet, 'DaemonSet', new ProblemSink(problems, 'DaemonSet'));
  }
  if (service !== undefined) {
    dropServerPopulatedFields(service, 'Service', new ProblemSink(problems, 'Service'));
  }
  const images = opts.images ?? { named: new Map<string, string>() };
  problems.push(...checkImageOverrides(images));
  const checked =
    daemonSet === undefined
      ? undefined
      : checkDaemonSet(daemonSet, opts, images, new ProblemSink(problems, 'DaemonSet'));
  const checkedService =
    service === undefined
      ? undefined
      : checkService(
          service,
          checked?.namespace,
          checked?.labels,
          new ProblemSink(problems, 'Service'),
        );

  if (problems.length > 0) {
    throw new ValidationError(`validating ${opts.source}`, problems);
  }
  return checkPayloadSizes(assemble(checked, checkedService), opts.source);
}

/**
 * Refuses payloads no agent would read, before anything is committed. A payload whose size bound
 * is under the limit is not serialised here: `validate` never needs its bytes, and `deploy`
 * serialises it once, when it reads `podYaml`.
 */
function checkPayloadSizes(deployment: Deployment, source: string): Deployment {
  const problems: FieldProblem[] = [];
  const payloads: Array<[string, unknown, () => string]> = [
    ['Pod', deployment.pod, () => deployment.podYaml],
  ];
  const service = deployment.service;
  if (service !== undefined) payloads.push(['Service', service.object, () => service.yaml]);
  for (const [kind, object, yaml] of payloads) {
    if (yamlSizeBound(object) <= MAX_PAYLOAD_BYTES) continue;
    const size = Buffer.byteLength(yaml());
    if (size > MAX_PAYLOAD_BYTES) {
      problems.push({
        field: source,
        message: `deployment ${deployment.nodegroup}/${deployment.name} has a ${kind} payload of ${size} bytes, over the ${MAX_PAYLOAD_BYTES}-byte limit every agent reads; split it into several deployments or remove containers, volumes or environment entries`,
      });
    }
  }
  if (problems.length > 0) {
    throw new ValidationError(`validating ${source}`, problems);
  }
  return deployment;
}

/** `base` with `key` defined as `compute()`, run on first read and then kept. */
function withLazyText<T extends object, K extends keyof T & string>(
  base: Omit<T, K>,
  key: K,
  compute: () => string,
): T {
  let value: string | undefined;
  return Object.defineProperty(base, key, {
    enumerable: true,
    configurable: true,
    get: () => (value ??= compute()),
  }) as T;
}

function assemble(
  checked: CheckedDaemonSet | undefined,
  service: CheckedService | undefined,
): Deployment {
  const { name, namespace, nodegroup, labels, annotations, podSpec, strategy } = checked ?? {};
  if (
    name === undefined ||
    namespace === undefined ||
    nodegroup === undefined ||
    labels === undefined ||
    annotations === undefined ||
    podSpec === undefined ||
    strategy === undefined
  ) {
    throw new PodminError(
      'INTERNAL',
      'building deployment: validation passed with incomplete results',
    );
  }
  const podAnnotations: Record<string, string> = { ...annotations };
  if (service !== undefined) {
    podAnnotations[SERVICE_ANNOTATION] = service.name;
  }
  // Always written, defaults included, so an agent never has to guess which defaults applied.
  podAnnotations[ROLLOUT_ANNOTATION] = serializeStrategy(strategy);
  const metadata: Record<string, unknown> = {
    name,
    namespace,
    labels,
    annotations: podAnnotations,
  };
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata, spec: podSpec };
  // The payloads are serialised when first read (see checkPayloadSizes).
  const deployment = withLazyText<Deployment, 'podYaml'>(
    { name, namespace, nodegroup, pod, strategy, warnings: service?.warnings ?? [] },
    'podYaml',
    () => stringifyCanonical(pod),
  );
  if (service !== undefined) {
    deployment.service = withLazyText<DeploymentService, 'yaml'>(
      { name: service.name, namespace: service.namespace, object: service.object },
      'yaml',
      () => stringifyCanonical(service.object),
    );
  }
  return deployment;
}

function showValue(value: unknown): string {
  if (value === undefined) {
    return '(missing)';
  }
  return typeof value === 'string' ? JSON.stringify(value) : describeType(value);
}

function required(sink: ProblemSink, path: string, what: string): undefined {
  sink.add(path, `is required: ${what}`);
  return undefined;
}

function checkDaemonSet(
  ds: Record<string, unknown>,
  opts: BuildOptions,
  images: ImageOverrides,
  sink: ProblemSink,
): CheckedDaemonSet {
  checkKeys(ds, ['apiVersion', 'kind', 'metadata', 'spec'], '', sink);
  const result: CheckedDaemonSet = {
    name: undefined,
    namespace: 'default',
    nodegroup: undefined,
    labels: undefined,
    annotations: {},
    podSpec: undefined,
    strategy: DEFAULT_STRATEGY,
  };
  let progressDeadlineSeconds = DEFAULT_STRATEGY.progressDeadlineSeconds;

  const metadata =
    ds.metadata === undefined
      ? required(sink, 'metadata', 'a mapping with at least name')
      : expectRecord(ds.metadata, 'metadata', sink);
  if (metadata !== undefined) {
    checkKeys(metadata, ['name', 'namespace', 'labels', 'annotations'], 'metadata', sink);
    result.name =
      metadata.name === undefined
        ? required(sink, 'metadata.name', 'a DNS-1123 label naming the DaemonSet and its Pod')
        : expectDnsLabel(metadata.name, 'metadata.name', sink);
    if (result.name !== undefined && opts.name !== undefined && result.name !== opts.name) {
      sink.add(
        'metadata.name',
        `is "${result.name}" but the deployment name is "${opts.name}"; they must match`,
      );
    }
    if (metadata.namespace !== undefined) {
      result.namespace = checkNamespace(metadata.namespace, 'metadata.namespace', sink);
    }
    if (metadata.labels !== undefined) {
      expectStringMap(metadata.labels, 'metadata.labels', sink, 'labels');
    }
    if (metadata.annotations !== undefined) {
      const annotations = expectStringMap(
        metadata.annotations,
        'metadata.annotations',
        sink,
        'annotations',
      );
      progressDeadlineSeconds =
        checkProgressDeadline(annotations?.[PROGRESS_DEADLINE_ANNOTATION], sink) ??
        progressDeadlineSeconds;
    }
  }

  const spec =
    ds.spec === undefined
      ? required(sink, 'spec', 'a mapping with selector and template')
      : expectRecord(ds.spec, 'spec', sink);
  if (spec === undefined) {
    return result;
  }
  checkKeys(
    spec,
    ['selector', 'template', 'updateStrategy', 'minReadySeconds', 'revisionHistoryLimit'],
    'spec',
    sink,
  );
  const minReadySeconds =
    spec.minReadySeconds === undefined
      ? DEFAULT_STRATEGY.minReadySeconds
      : expectInteger(spec.minReadySeconds, 'spec.minReadySeconds', sink, 0, 2147483647);
  if (spec.revisionHistoryLimit !== undefined) {
    expectInteger(spec.revisionHistoryLimit, 'spec.revisionHistoryLimit', sink, 0, 2147483647);
  }
  result.strategy = {
    ...checkUpdateStrategy(spec.updateStrategy, sink),
    minReadySeconds: minReadySeconds ?? DEFAULT_STRATEGY.minReadySeconds,
    progressDeadlineSeconds,
  };

  const matchLabels = checkSelector(spec.selector, sink);
  const template =
    spec.template === undefined
      ? required(sink, 'spec.template', 'the Pod template with metadata.labels and spec')
      : expectRecord(spec.template, 'spec.template', sink);
  if (template !== undefined) {
    const hostBindings = checkTemplate(template, result, opts, images, sink);
    checkSurgeWithHostPorts(result.strategy, hostBindings, sink);
  }
  if (matchLabels !== undefined && template !== undefined) {
    checkSelectorSubset(
      matchLabels,
      result.labels,
      'spec.selector.matchLabels',
      sink,
      'does not match the Pod template',
    );
  }
  return result;
}

function checkSelector(value: unknown, sink: ProblemSink): Record<string, string> | undefined {
  const selector =
    value === undefined
      ? required(sink, 'spec.selector', 'a mapping with a non-empty matchLabels')
      : expectRecord(value, 'spec.selector', sink);
  if (selector === undefined) {
    return undefined;
  }
  checkKeys(selector, ['matchLabels', 'matchExpressions'], 'spec.selector', sink);
  if (selector.matchExpressions !== undefined) {
    sink.add(
      'spec.selector.matchExpressions',
      'is not supported; select the Pod template with equality-based matchLabels only',
    );
  }
  if (selector.matchLabels === undefined) {
    return required(
      sink,
      'spec.selector.matchLabels',
      'a non-empty map of the Pod template labels',
    );
  }
  const matchLabels = expectStringMap(
    selector.matchLabels,
    'spec.selector.matchLabels',
    sink,
    'selector',
  );
  if (matchLabels !== undefined && Object.keys(matchLabels).length === 0) {
    sink.add(
      'spec.selector.matchLabels',
      'must not be empty: select the Pod template by at least one label',
    );
    return undefined;
  }
  return matchLabels;
}

function checkTemplate(
  template: Record<string, unknown>,
  result: CheckedDaemonSet,
  opts: BuildOptions,
  images: ImageOverrides,
  sink: ProblemSink,
): string[] {
  checkKeys(template, ['metadata', 'spec'], 'spec.template', sink);
  const metadata =
    template.metadata === undefined
      ? required(
          sink,
          'spec.template.metadata',
          'a mapping with labels matching spec.selector.matchLabels',
        )
      : expectRecord(template.metadata, 'spec.template.metadata', sink);
  if (metadata !== undefined) {
    checkTemplateMetadata(metadata, result, sink);
  }
  const spec =
    template.spec === undefined
      ? required(
          sink,
          'spec.template.spec',
          'the Pod spec with containers and the NodeGroup nodeSelector',
        )
      : expectRecord(template.spec, 'spec.template.spec', sink);
  if (spec !== undefined) {
    const checked = checkPodSpec(spec, {
      podName: result.name,
      namespace: result.namespace,
      nodegroup: opts.nodegroup,
      images,
      sink,
    });
    result.podSpec = checked.spec;
    result.nodegroup = checked.nodegroup;
    return checked.hostBindings;
  }
  return [];
}

function checkTemplateMetadata(
  metadata: Record<string, unknown>,
  result: CheckedDaemonSet,
  sink: ProblemSink,
): void {
  for (const field of ['name', 'namespace'] as const) {
    if (metadata[field] !== undefined) {
      sink.add(
        `spec.template.metadata.${field}`,
        `is not allowed; podmin sets the Pod ${field} from the DaemonSet metadata.${field}`,
      );
    }
  }
  // name and namespace have their own message above; the list of what is allowed names only
  // what is allowed.
  checkKeys(
    metadata,
    ['labels', 'annotations', 'name', 'namespace'],
    'spec.template.metadata',
    sink,
    'is not supported; allowed fields here are: labels, annotations',
  );
  result.labels =
    metadata.labels === undefined
      ? required(
          sink,
          'spec.template.metadata.labels',
          'a map including every spec.selector.matchLabels entry',
        )
      : expectStringMap(metadata.labels, 'spec.template.metadata.labels', sink, 'labels');
  if (metadata.annotations === undefined) {
    return;
  }
  const path = 'spec.template.metadata.annotations';
  const annotations = expectStringMap(metadata.annotations, path, sink, 'annotations');
  if (annotations === undefined) {
    return;
  }
  result.annotations = annotations;
  for (const key of RESERVED_POD_ANNOTATIONS) {
    if (annotations[key] !== undefined) {
      sink.add(
        entryPath(path, key),
        'is set by podmin and may not appear in the template; remove it',
      );
    }
  }
  if (annotations[PROGRESS_DEADLINE_ANNOTATION] !== undefined) {
    sink.add(
      entryPath(path, PROGRESS_DEADLINE_ANNOTATION),
      `belongs on the DaemonSet, not its Pod template; move it to metadata.annotations (podmin carries it to the Pod inside ${ROLLOUT_ANNOTATION})`,
    );
  }
  for (const key of [AWS_PARAMETER_STORE_ANNOTATION, AWS_SECRETS_MANAGER_ANNOTATION]) {
    const value = annotations[key];
    if (value !== undefined) {
      checkSecretKeys(value, entryPath(path, key), sink);
    }
  }
}

function checkSecretKeys(value: string, path: string, sink: ProblemSink): void {
  const seen = new Set<string>();
  for (const key of value.split(',')) {
    if (!SAFE_KEY.test(key)) {
      sink.add(
        path,
        `key "${key}" is invalid; list comma-separated keys (no spaces), each a single path component matching [A-Za-z0-9][A-Za-z0-9._-]* (not "." or "..")`,
      );
    } else if (seen.has(key)) {
      sink.add(path, `key "${key}" is listed more than once; list each key once`);
    }
    seen.add(key);
  }
}

const STRATEGY_PATH = 'spec.updateStrategy';
const ROLLING_UPDATE_PATH = `${STRATEGY_PATH}.rollingUpdate`;
const INT_OR_PERCENT_RULE = 'an integer ≥ 0 or a percentage from "0%" to "100%"';

/** What `spec.updateStrategy` resolves to, Kubernetes' defaults filled in. */
type UpdateStrategy = Pick<RolloutStrategy, 'type' | 'maxUnavailable' | 'maxSurge'>;

/**
 * Checks `spec.updateStrategy` with Kubernetes' DaemonSet rules and resolves it; an invalid part
 * is recorded and resolves to its default.
 */
function checkUpdateStrategy(value: unknown, sink: ProblemSink): UpdateStrategy {
  const resolved = {
    type: DEFAULT_STRATEGY.type,
    maxUnavailable: DEFAULT_STRATEGY.maxUnavailable,
    maxSurge: DEFAULT_STRATEGY.maxSurge,
  };
  const strategy = value === undefined ? undefined : expectRecord(value, STRATEGY_PATH, sink);
  if (strategy === undefined) return resolved;
  checkKeys(strategy, ['type', 'rollingUpdate'], STRATEGY_PATH, sink);
  const { type, rollingUpdate } = strategy;
  if (type === 'RollingUpdate' || type === 'OnDelete') {
    resolved.type = type;
  } else if (type !== undefined) {
    sink.add(
      `${STRATEGY_PATH}.type`,
      `must be RollingUpdate (the default) or OnDelete, not ${describeType(type)}`,
    );
  }
  if (rollingUpdate === undefined) return resolved;
  if (resolved.type === 'OnDelete') {
    sink.add(
      ROLLING_UPDATE_PATH,
      'is only allowed with type RollingUpdate; with OnDelete a node moves to the new template only when its Pod is deleted, so remove rollingUpdate or set type to RollingUpdate',
    );
    return resolved;
  }
  const limits = expectRecord(rollingUpdate, ROLLING_UPDATE_PATH, sink);
  if (limits === undefined) return resolved;
  checkKeys(limits, ['maxUnavailable', 'maxSurge'], ROLLING_UPDATE_PATH, sink);
  let refused = false;
  for (const field of ['maxUnavailable', 'maxSurge'] as const) {
    const limit = limits[field];
    if (limit === undefined) continue;
    if (isIntOrPercent(limit)) {
      resolved[field] = limit;
    } else {
      sink.add(
        `${ROLLING_UPDATE_PATH}.${field}`,
        `must be ${INT_OR_PERCENT_RULE} (default ${DEFAULT_STRATEGY[field]}), not ${describeType(limit)}`,
      );
      refused = true;
    }
  }
  // After a refused value, the pair is judged once the user has fixed it.
  if (!refused && isZero(resolved.maxUnavailable) && isZero(resolved.maxSurge)) {
    const surgeDefaulted = limits.maxSurge === undefined ? ' (its default)' : '';
    sink.add(
      `${ROLLING_UPDATE_PATH}.maxUnavailable`,
      `may not be 0 when ${ROLLING_UPDATE_PATH}.maxSurge is also 0${surgeDefaulted}: no node could ever move to the new Pod; set maxSurge to 1 or more (${INT_OR_PERCENT_RULE}) to start each new Pod beside the old one, or maxUnavailable to 1 or more to replace the Pod in place`,
    );
  }
  return resolved;
}

function isZero(value: number | string): boolean {
  return value === 0 || value === '0%';
}

/** The DaemonSet's `podmin.dev/progress-deadline` in seconds, or undefined when absent or refused. */
function checkProgressDeadline(text: string | undefined, sink: ProblemSink): number | undefined {
  if (text === undefined) return undefined;
  const seconds = parseDurationSeconds(text);
  if (seconds === undefined) {
    sink.add(
      entryPath('metadata.annotations', PROGRESS_DEADLINE_ANNOTATION),
      `${JSON.stringify(text)} is not a duration; write a positive whole number of hours, minutes and seconds such as 90s, 5m or 1h30m (default 5m)`,
    );
  }
  return seconds;
}

/**
 * Refuses host ports and the host network with a surge: the old and the new Pod run side by
 * side on a node during a surge and cannot both bind the same host port.
 */
function checkSurgeWithHostPorts(
  strategy: RolloutStrategy,
  hostBindings: readonly string[],
  sink: ProblemSink,
): void {
  if (!surges(strategy)) return;
  const surge = `${ROLLING_UPDATE_PATH}.maxSurge ${JSON.stringify(strategy.maxSurge)}`;
  for (const path of hostBindings) {
    const [what, remedy] = path.endsWith('.hostNetwork')
      ? ['true cannot be used with', "both bind the node's network ports; set maxSurge to 0"]
      : [
          'cannot be used with',
          'both need this host port; set maxSurge to 0 or remove the hostPort',
        ];
    sink.add(
      path,
      `${what} ${surge}: during a surge the old and the new Pod run side by side on a node and would ${remedy} (with maxUnavailable 1 or more, the old Pod stops before the new one starts)`,
    );
  }
}
