import type { ImageOverrides } from './flags';
import type { ProblemSink } from './checks';
import { checkKeys, childPath, expectDnsLabel, expectList, expectRecord } from './checks';
import { checkClusterImage } from './image-reference';
import { CONTAINER_FIELDS } from './kubernetes-fields';

/** Where a DaemonSet's Pod spec sits in its manifest: every problem path below starts here. */
export const POD_SPEC_PATH = 'spec.template.spec';
const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'];

/** A container or init container of the Pod spec, with where it is and what set its image. */
export interface ContainerEntry {
  path: string;
  container: Record<string, unknown>;
  name: string | undefined;
  overriddenBy?: string;
}

/** Checks every container's fields and names (unique across both lists), in order. */
export function collectContainers(
  spec: Record<string, unknown>,
  sink: ProblemSink,
): ContainerEntry[] {
  const entries: ContainerEntry[] = [];
  const names = new Map<string, string>();
  for (const list of ['containers', 'initContainers'] as const) {
    const listPath = childPath(POD_SPEC_PATH, list);
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

/** Applies `--image` overrides: a bare reference to the only container, a named one to its container. */
export function applyImages(
  entries: ContainerEntry[],
  spec: Record<string, unknown>,
  images: ImageOverrides,
  sink: ProblemSink,
): void {
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
        message: `a bare --image <reference> needs exactly one container and no init containers, but ${POD_SPEC_PATH} has ${regular} container(s) and ${init} init container(s); use --image <container>=<reference>`,
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
        message: `no container named "${name}" in ${POD_SPEC_PATH}; containers and init containers are: ${known.join(', ') || '(none)'}`,
      });
      continue;
    }
    entry.container.image = ref;
    entry.overriddenBy = `--image ${name}=${ref}`;
  }
}

/** Checks a container's image and resolves it to the cluster registry's reference. */
export function checkImage(entry: ContainerEntry, sink: ProblemSink): void {
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

/** Checks `imagePullPolicy`, defaulting it to Always. */
export function checkPullPolicy(entry: ContainerEntry, sink: ProblemSink): void {
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
