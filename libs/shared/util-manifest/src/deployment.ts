import { PodminError, ValidationError } from '@podmin/util-errors';
import type { FieldProblem } from '@podmin/util-errors';
import { ROLLOUT_ANNOTATION, serializeStrategy } from '@podmin/util-rollout';
import type { RolloutStrategy } from '@podmin/util-rollout';
import { ProblemSink, describeType, isRecord } from './checks';
import { MAX_PAYLOAD_BYTES, SERVICE_ANNOTATION } from './constants';
import { checkImageOverrides } from './flags';
import type { ImageOverrides } from './flags';

import { dropServerPopulatedFields } from './server-fields';
import { checkDaemonSet, type CheckedDaemonSet } from './daemonset-checks';
import { checkService } from './service';
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

const STREAM_RULE =
  'a deployment stream holds exactly one apps/v1 DaemonSet and at most one v1 Service';

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
