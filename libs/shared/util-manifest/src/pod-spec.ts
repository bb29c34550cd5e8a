import type { ImageOverrides } from './flags';
import type { ProblemSink } from './checks';
import {
  checkKeys,
  childPath,
  deepEqual,
  entryPath,
  expectDnsLabel,
  expectList,
  expectRecord,
  isRecord,
  normalizePath,
  pathsOverlap,
} from './checks';
import {
  NODEGROUP_SELECTOR_KEY,
  RESERVED_SECRET_VOLUMES,
  SECRET_MOUNT_ROOT,
  WORKLOAD_IDENTITY_MOUNT_PATH,
  WORKLOAD_IDENTITY_VOLUME,
  workloadIdentityHostPath,
} from './constants';
import { checkContainerDetails, checkResources } from './container-checks';
import { checkClusterImage } from './image-reference';
import { CONTAINER_FIELDS, POD_SPEC_FIELDS } from './kubernetes-fields';
import { checkPodDns } from './pod-dns';
import { checkStaticPodFields } from './static-pod-fields';

const SPEC_PATH = 'spec.template.spec';
const SCHEDULING_FIELDS = ['nodeName', 'affinity', 'schedulerName', 'topologySpreadConstraints'];
const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'];

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

interface ContainerEntry {
  path: string;
  container: Record<string, unknown>;
  name: string | undefined;
  overriddenBy?: string;
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
  applyImages(entries, spec, ctx);
  for (const entry of entries) {
    checkImage(entry, sink);
    checkPullPolicy(entry, sink);
    checkContainerDetails(entry.container, entry.path, sink);
  }
  if (spec.resources !== undefined) {
    checkResources(spec.resources, childPath(SPEC_PATH, 'resources'), sink);
  }
  addWorkloadIdentity(spec, entries, ctx);
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

function collectContainers(spec: Record<string, unknown>, sink: ProblemSink): ContainerEntry[] {
  const entries: ContainerEntry[] = [];
  const names = new Map<string, string>();
  for (const list of ['containers', 'initContainers'] as const) {
    const listPath = childPath(SPEC_PATH, list);
    const value = spec[list];
    if (value === undefined) {
      if (list === 'containers') {
        sink.add(listPath, 'is required; list at least one container');
      }
      continue;
    }
    const items = expectList(value, listPath, sink);
    if (items === undefined) {
      continue;
    }
    if (list === 'containers' && items.length === 0) {
      sink.add(listPath, 'must list at least one container');
    }
    items.forEach((item, index) => {
      const path = `${listPath}[${index}]`;
      const container = expectRecord(item, path, sink);
      if (container === undefined) {
        return;
      }
      checkKeys(
        container,
        CONTAINER_FIELDS,
        path,
        sink,
        'is not a Kubernetes v1 Container field; check its spelling against the v1 Container reference',
      );
      const namePath = childPath(path, 'name');
      const name =
        container.name === undefined
          ? (sink.add(namePath, 'is required: a DNS-1123 label unique within the Pod'), undefined)
          : expectDnsLabel(container.name, namePath, sink);
      if (name !== undefined) {
        const other = names.get(name);
        if (other !== undefined) {
          sink.add(
            namePath,
            `"${name}" is already used by ${other}; container names must be unique across containers and initContainers`,
          );
        } else {
          names.set(name, path);
        }
      }
      entries.push({ path, container, name });
    });
  }
  return entries;
}

function listLength(value: unknown): number {
  return Array.isArray(value) ? value.length : 0;
}

function applyImages(
  entries: ContainerEntry[],
  spec: Record<string, unknown>,
  ctx: PodSpecContext,
): void {
  const { images, sink } = ctx;
  if (images.bare !== undefined) {
    const regular = listLength(spec.containers);
    const init = listLength(spec.initContainers);
    const only = entries[0];
    if (regular === 1 && init === 0 && only !== undefined) {
      only.container.image = images.bare;
      only.overriddenBy = `--image ${images.bare}`;
    } else {
      sink.problems.push({
        field: '--image',
        message: `a bare --image <reference> needs exactly one container and no init containers, but ${SPEC_PATH} has ${regular} container(s) and ${init} init container(s); use --image <container>=<reference>`,
      });
    }
  }
  for (const [name, ref] of images.named) {
    const entry = entries.find((candidate) => candidate.name === name);
    if (entry === undefined) {
      const known = entries.flatMap((candidate) =>
        candidate.name === undefined ? [] : [candidate.name],
      );
      sink.problems.push({
        field: '--image',
        message: `no container named "${name}" in ${SPEC_PATH}; containers and init containers are: ${known.join(', ') || '(none)'}`,
      });
      continue;
    }
    entry.container.image = ref;
    entry.overriddenBy = `--image ${name}=${ref}`;
  }
}

function checkImage(entry: ContainerEntry, sink: ProblemSink): void {
  const path = childPath(entry.path, 'image');
  const image = entry.container.image;
  const label = entry.name ?? entry.path;
  if (image === undefined || image === '') {
    sink.add(
      path,
      `container "${label}" has no image; every container needs an image: set image in the manifest or pass --image ${label}=<reference>`,
    );
    return;
  }
  if (typeof image !== 'string') {
    sink.add(
      path,
      'must be a string image reference, e.g. registry.podmin.internal/apps/example/web:v1',
    );
    return;
  }
  const source = entry.overriddenBy === undefined ? '' : ` (set by ${entry.overriddenBy})`;
  const result = checkClusterImage(image, `${path}${source}`);
  if (result.ok) {
    entry.container.image = result.image;
  } else {
    sink.add(result.problem.field, result.problem.message);
  }
}

function checkPullPolicy(entry: ContainerEntry, sink: ProblemSink): void {
  const policy = entry.container.imagePullPolicy;
  if (policy === undefined) {
    entry.container.imagePullPolicy = 'Always';
  } else if (typeof policy !== 'string' || !PULL_POLICIES.includes(policy)) {
    sink.add(
      childPath(entry.path, 'imagePullPolicy'),
      `must be one of ${PULL_POLICIES.join(', ')} (omit it for Always)`,
    );
  }
}

const IDENTITY_MOUNT = {
  name: WORKLOAD_IDENTITY_VOLUME,
  mountPath: WORKLOAD_IDENTITY_MOUNT_PATH,
  readOnly: true,
};

function isWithin(path: string, root: string): boolean {
  const normalized = normalizePath(path);
  return normalized === root || normalized.startsWith(`${root}/`);
}

/** Checks volumes and mounts for conflicts with reserved names/paths, then adds the identity volume and mounts. */
function addWorkloadIdentity(
  spec: Record<string, unknown>,
  entries: ContainerEntry[],
  ctx: PodSpecContext,
): void {
  const { sink } = ctx;
  const identityVolume =
    ctx.podName === undefined
      ? undefined
      : {
          name: WORKLOAD_IDENTITY_VOLUME,
          hostPath: { path: workloadIdentityHostPath(ctx.podName), type: 'Directory' },
        };
  const volumesPath = childPath(SPEC_PATH, 'volumes');
  const volumes = spec.volumes === undefined ? [] : expectList(spec.volumes, volumesPath, sink);
  let hasIdentityVolume = false;
  const seen = new Map<string, string>();
  volumes?.forEach((item, index) => {
    const path = `${volumesPath}[${index}]`;
    const volume = expectRecord(item, path, sink);
    if (volume === undefined) {
      return;
    }
    const name = expectDnsLabel(volume.name, childPath(path, 'name'), sink);
    if (name === undefined) {
      return;
    }
    const other = seen.get(name);
    if (other !== undefined) {
      sink.add(
        childPath(path, 'name'),
        `"${name}" is already used by ${other}; volume names must be unique`,
      );
    }
    seen.set(name, path);
    if (RESERVED_SECRET_VOLUMES.includes(name)) {
      sink.add(
        childPath(path, 'name'),
        `"${name}" is reserved; the podmin agent injects it for secret mounts declared by annotation, use another volume name`,
      );
    } else if (name === WORKLOAD_IDENTITY_VOLUME) {
      if (identityVolume !== undefined && deepEqual(volume, identityVolume)) {
        hasIdentityVolume = true;
      } else {
        sink.add(
          path,
          `volume name ${WORKLOAD_IDENTITY_VOLUME} is reserved for the workload identity; remove this volume (podmin adds it) or define it exactly as hostPath {path: ${identityVolume?.hostPath.path ?? workloadIdentityHostPath('<pod>')}, type: Directory}`,
        );
      }
    }
  });

  for (const entry of entries) {
    const mountsPath = childPath(entry.path, 'volumeMounts');
    const value = entry.container.volumeMounts;
    const mounts = value === undefined ? [] : expectList(value, mountsPath, sink);
    if (mounts === undefined) {
      continue;
    }
    let hasIdentityMount = false;
    mounts.forEach((item, index) => {
      const path = `${mountsPath}[${index}]`;
      const mount = expectRecord(item, path, sink);
      if (mount === undefined) {
        return;
      }
      const name = mount.name;
      const mountPath = mount.mountPath;
      if (typeof name !== 'string' || name === '') {
        sink.add(
          childPath(path, 'name'),
          'is required: the name of a volume in spec.template.spec.volumes',
        );
      }
      if (typeof mountPath !== 'string' || !mountPath.startsWith('/')) {
        sink.add(
          childPath(path, 'mountPath'),
          'is required: an absolute path inside the container',
        );
      }
      if (typeof name === 'string' && RESERVED_SECRET_VOLUMES.includes(name)) {
        sink.add(
          childPath(path, 'name'),
          `"${name}" is reserved; the podmin agent mounts it itself for secret annotations`,
        );
      }
      if (name === WORKLOAD_IDENTITY_VOLUME) {
        if (deepEqual(mount, IDENTITY_MOUNT)) {
          hasIdentityMount = true;
        } else {
          sink.add(
            path,
            `volume ${WORKLOAD_IDENTITY_VOLUME} may only be mounted at ${WORKLOAD_IDENTITY_MOUNT_PATH} with readOnly: true and no other fields (or omitted; podmin adds that mount)`,
          );
        }
        return;
      }
      if (typeof mountPath !== 'string') {
        return;
      }
      if (pathsOverlap(mountPath, WORKLOAD_IDENTITY_MOUNT_PATH)) {
        sink.add(
          childPath(path, 'mountPath'),
          `"${mountPath}" overlaps the workload identity mount ${WORKLOAD_IDENTITY_MOUNT_PATH}, which podmin reserves; mount the volume at a path that is neither it, inside it nor a parent of it`,
        );
      } else if (isWithin(mountPath, SECRET_MOUNT_ROOT)) {
        sink.add(
          childPath(path, 'mountPath'),
          `"${mountPath}" is under ${SECRET_MOUNT_ROOT}, which the podmin agent reserves for secret mounts; use another path`,
        );
      }
    });
    if (!hasIdentityMount) {
      entry.container.volumeMounts = [...mounts, { ...IDENTITY_MOUNT }];
    }
  }

  if (volumes !== undefined && !hasIdentityVolume && identityVolume !== undefined) {
    spec.volumes = [...volumes, identityVolume];
  }
}
