import type { ImageOverrides } from './flags';
import type { ProblemSink } from './checks';
import { checkKeys, childPath, entryPath, expectDnsLabel, isRecord } from './checks';
import { NODEGROUP_SELECTOR_KEY } from './constants';
import { checkContainerDetails, checkResources } from './container-checks';
import { POD_SPEC_FIELDS } from './kubernetes-fields';
import {
  applyImages,
  checkImage,
  checkPullPolicy,
  collectContainers,
  POD_SPEC_PATH as SPEC_PATH,
} from './pod-containers';
import { checkPodDns } from './pod-dns';
import { addWorkloadIdentity } from './pod-identity';
import { checkStaticPodFields } from './static-pod-fields';

const SCHEDULING_FIELDS = ['nodeName', 'affinity', 'schedulerName', 'topologySpreadConstraints'];

/** Inputs for checking and transforming a DaemonSet Pod template spec. */
export interface PodSpecContext {
  /** Pod name (the DaemonSet name) when valid; used for the identity hostPath. */
  podName: string | undefined;
  /** The Pod's namespace when valid; its cluster search domain bounds `dnsConfig.searches`. */
  namespace: string | undefined;
  /** Required NodeGroup (`-g`), if the caller gave one. */
  nodegroup: string | undefined;
  images: ImageOverrides;
  sink: ProblemSink;
}

/** The Pod spec ready to emit (NodeGroup selector removed, images resolved, identity added). */
export interface CheckedPodSpec {
  spec: Record<string, unknown>;
  nodegroup: string | undefined;
  /**
   * Field paths binding the node's ports (`hostNetwork: true`, each non-zero `hostPort`), which
   * two Pods of the deployment cannot share on one node.
   */
  hostBindings: string[];
}

/** Validates a DaemonSet's `spec.template.spec` and returns a transformed copy for the Pod. */
export function checkPodSpec(
  template: Record<string, unknown>,
  ctx: PodSpecContext,
): CheckedPodSpec {
  const { sink } = ctx;
  const spec = structuredClone(template);
  checkKeys(
    spec,
    POD_SPEC_FIELDS,
    SPEC_PATH,
    sink,
    'is not a Kubernetes v1 PodSpec field; check its spelling against the v1 PodSpec reference',
  );
  checkStaticPodFields(spec, SPEC_PATH, sink);
  checkPodDns(spec, SPEC_PATH, ctx.namespace, sink);
  for (const field of SCHEDULING_FIELDS) {
    if (spec[field] !== undefined) {
      sink.add(
        childPath(SPEC_PATH, field),
        `is not supported; the nodeSelector ${NODEGROUP_SELECTOR_KEY}: <nodegroup> is the sole scheduling target`,
      );
    }
  }
  if (spec.ephemeralContainers !== undefined) {
    sink.add(
      childPath(SPEC_PATH, 'ephemeralContainers'),
      'is not supported; ephemeral containers cannot be declared in a Pod manifest, use containers or initContainers',
    );
  }

  const nodegroup = checkNodeSelector(spec.nodeSelector, ctx);
  delete spec.nodeSelector;

  const entries = collectContainers(spec, sink);
  applyImages(entries, spec, ctx.images, sink);
  for (const entry of entries) {
    checkImage(entry, sink);
    checkPullPolicy(entry, sink);
    checkContainerDetails(entry.container, entry.path, sink);
  }
  if (spec.resources !== undefined) {
    checkResources(spec.resources, childPath(SPEC_PATH, 'resources'), sink);
  }
  addWorkloadIdentity(spec, entries, ctx.podName, sink);
  return { spec, nodegroup, hostBindings: hostBindingPaths(spec, SPEC_PATH) };
}

/**
 * Paths (under `specPath`) of the fields of a Pod spec that bind the node's ports:
 * `hostNetwork: true` and every non-zero `hostPort` of a container or init container.
 */
export function hostBindingPaths(spec: Record<string, unknown>, specPath: string): string[] {
  const paths: string[] = [];
  if (spec.hostNetwork === true) paths.push(childPath(specPath, 'hostNetwork'));
  for (const list of ['containers', 'initContainers'] as const) {
    const containers = spec[list];
    if (!Array.isArray(containers)) continue;
    containers.forEach((container: unknown, index) => {
      if (!isRecord(container) || !Array.isArray(container.ports)) return;
      container.ports.forEach((port: unknown, portIndex) => {
        // hostPort 0 means "no host port", as in Kubernetes.
        if (isRecord(port) && typeof port.hostPort === 'number' && port.hostPort !== 0) {
          paths.push(`${childPath(specPath, list)}[${index}].ports[${portIndex}].hostPort`);
        }
      });
    });
  }
  return paths;
}

function checkNodeSelector(value: unknown, ctx: PodSpecContext): string | undefined {
  const path = childPath(SPEC_PATH, 'nodeSelector');
  const required = `must be exactly {${NODEGROUP_SELECTOR_KEY}: <nodegroup>}`;
  if (value === undefined) {
    ctx.sink.add(path, `is required; it ${required}, which selects the NodeGroup to run on`);
    return undefined;
  }
  if (!isRecord(value)) {
    ctx.sink.add(path, required);
    return undefined;
  }
  for (const key of Object.keys(value)) {
    if (key !== NODEGROUP_SELECTOR_KEY) {
      ctx.sink.add(
        entryPath(path, key),
        `is not allowed; the nodeSelector ${required} and is the sole scheduling target`,
      );
    }
  }
  const selected = value[NODEGROUP_SELECTOR_KEY];
  if (selected === undefined) {
    ctx.sink.add(path, `has no ${NODEGROUP_SELECTOR_KEY}; it ${required}`);
    return undefined;
  }
  const nodegroup = expectDnsLabel(selected, entryPath(path, NODEGROUP_SELECTOR_KEY), ctx.sink);
  if (nodegroup !== undefined && ctx.nodegroup !== undefined && nodegroup !== ctx.nodegroup) {
    ctx.sink.add(
      entryPath(path, NODEGROUP_SELECTOR_KEY),
      `is "${nodegroup}" but --nodegroup is "${ctx.nodegroup}"; they must match`,
    );
  }
  return nodegroup;
}
