import { parseDependencyObjectKey } from './manifest';
import { compareRecordedVersionsDescending } from './versions';

/** An object of the `dependencies/` listing, as retention needs it. */
export interface RetentionObject {
  key: string;
  lastModified: Date;
}

/** Retention rules: how many versions to keep and how old an older version must be. */
export interface RetentionPolicy {
  /** Newest versions kept per dependency and architecture (2). */
  keepVersions: number;
  /** Minimum age of every object of an older version before it is deleted (28 days). */
  minAgeMs: number;
}

/** The spec's retention: newest two versions kept, older ones deleted after 28 days. */
export const DEFAULT_RETENTION: RetentionPolicy = {
  keepVersions: 2,
  minAgeMs: 28 * 24 * 60 * 60 * 1000,
};

/** What retention decided for one listing. */
export interface RetentionPlan {
  /** Keys to delete, sorted. */
  deletions: string[];
  /** Versions older than the kept ones that are still too young, as `name/arch@version`. */
  deferred: string[];
}

/**
 * Groups a `dependencies/` listing by dependency and architecture (every architecture ever
 * uploaded, active or not) and plans deletions: the newest `keepVersions` versions are kept,
 * older versions are deleted only when every one of their objects is at least `minAgeMs` old.
 * Keys in `protectedKeys` (the published manifest's files) are never deleted, and objects that
 * are not versioned dependency files (the manifest itself) are ignored.
 */
export function planRetention(
  objects: readonly RetentionObject[],
  now: Date,
  protectedKeys: ReadonlySet<string>,
  policy: RetentionPolicy = DEFAULT_RETENTION,
): RetentionPlan {
  const groups = new Map<string, Map<string, RetentionObject[]>>();
  for (const object of objects) {
    const parsed = parseDependencyObjectKey(object.key);
    if (parsed === undefined) continue;
    const group = `${parsed.name}/${parsed.arch}`;
    let versions = groups.get(group);
    if (versions === undefined)
      groups.set(group, (versions = new Map<string, RetentionObject[]>()));
    const list = versions.get(parsed.version) ?? [];
    list.push(object);
    versions.set(parsed.version, list);
  }
  const deletions: string[] = [];
  const deferred: string[] = [];
  for (const [group, versions] of [...groups].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const ordered = [...versions.keys()].sort(compareRecordedVersionsDescending);
    for (const version of ordered.slice(policy.keepVersions)) {
      const versionObjects = versions.get(version) ?? [];
      if (versionObjects.some((o) => protectedKeys.has(o.key))) continue;
      const oldEnough = versionObjects.every(
        (o) => now.getTime() - o.lastModified.getTime() >= policy.minAgeMs,
      );
      if (oldEnough) deletions.push(...versionObjects.map((o) => o.key));
      else deferred.push(`${group}@${version}`);
    }
  }
  return { deletions: deletions.sort(), deferred };
}
