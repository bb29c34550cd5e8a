import {
  DEFAULT_STRATEGY,
  PROGRESS_DEADLINE_ANNOTATION,
  ROLLOUT_ANNOTATION,
} from '@podmin/util-rollout';
import type { RolloutStrategy } from '@podmin/util-rollout';
import type { ProblemSink } from './checks';
import {
  checkKeys,
  entryPath,
  expectDnsLabel,
  expectInteger,
  expectRecord,
  expectStringMap,
} from './checks';
import {
  AWS_PARAMETER_STORE_ANNOTATION,
  AWS_SECRETS_MANAGER_ANNOTATION,
  RESERVED_POD_ANNOTATIONS,
} from './constants';

import type { ImageOverrides } from './flags';
import { checkPodSpec } from './pod-spec';

import { checkObjectMeta, checkSelectorSubset } from './service';

import type { BuildOptions } from './deployment';
import {
  checkProgressDeadline,
  checkSurgeWithHostPorts,
  checkUpdateStrategy,
} from './update-strategy-checks';

// The DaemonSet checks of buildDeployment: metadata, selector, Pod template and the rollout
// fields (moved out of deployment.ts unchanged).

const SAFE_KEY = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** What {@link checkDaemonSet} read of a DaemonSet. */
export interface CheckedDaemonSet {
  name: string | undefined;
  namespace: string | undefined;
  nodegroup: string | undefined;
  labels: Record<string, string> | undefined;
  annotations: Record<string, string>;
  podSpec: Record<string, unknown> | undefined;
  strategy: RolloutStrategy;
}

function required(sink: ProblemSink, path: string, what: string): undefined {
  sink.add(path, `is required: ${what}`);
  return undefined;
}

/** Checks one DaemonSet document, adding every problem to `sink`. */
export function checkDaemonSet(
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
    const meta = checkObjectMeta(metadata, sink);
    if (metadata.namespace !== undefined) result.namespace = meta.namespace;
    if (metadata.annotations !== undefined) {
      progressDeadlineSeconds =
        checkProgressDeadline(meta.annotations?.[PROGRESS_DEADLINE_ANNOTATION], sink) ??
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
