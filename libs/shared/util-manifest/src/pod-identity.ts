import type { ProblemSink } from './checks';
import {
  childPath,
  deepEqual,
  expectDnsLabel,
  expectList,
  expectRecord,
  normalizePath,
  pathsOverlap,
} from './checks';
import {
  RESERVED_SECRET_VOLUMES,
  SECRET_MOUNT_ROOT,
  WORKLOAD_IDENTITY_MOUNT_PATH,
  WORKLOAD_IDENTITY_VOLUME,
  workloadIdentityHostPath,
} from './constants';
import { type ContainerEntry, POD_SPEC_PATH } from './pod-containers';

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
export function addWorkloadIdentity(
  spec: Record<string, unknown>,
  entries: ContainerEntry[],
  podName: string | undefined,
  sink: ProblemSink,
): void {
  const identityVolume =
    podName === undefined
      ? undefined
      : {
          name: WORKLOAD_IDENTITY_VOLUME,
          hostPath: { path: workloadIdentityHostPath(podName), type: 'Directory' },
        };
  const volumesPath = childPath(POD_SPEC_PATH, 'volumes');
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
