import semver from 'semver';
import type { VersionPin } from './catalog';
import { compareDebianVersions, parseDebianVersion } from './debian';

const DATED = /^(\d{8})\.(\d+)$/;

/**
 * The comparable form of an upstream version under `pin`, or undefined when the version is not
 * acceptable: not a clean release version, a prerelease, or another major/minor.
 */
export function acceptedVersion(
  version: string,
  pin: VersionPin,
  cliVersion?: string,
): semver.SemVer | undefined {
  switch (pin.kind) {
    case 'semver': {
      const parsed = semver.parse(version);
      if (parsed === null || parsed.prerelease.length > 0 || parsed.build.length > 0) {
        return undefined;
      }
      if (parsed.major !== pin.major) return undefined;
      if (pin.minor !== undefined && parsed.minor !== pin.minor) return undefined;
      return parsed;
    }
    case 'dated': {
      const match = DATED.exec(version);
      if (match === null) return undefined;
      return semver.parse(`${Number(match[1])}.${Number(match[2])}.0`) ?? undefined;
    }
    case 'cli': {
      const parsed = semver.parse(version);
      return parsed !== null && cliVersion !== undefined && semver.eq(parsed, cliVersion)
        ? parsed
        : undefined;
    }
  }
}

/** The greatest acceptable candidate under `pin` (prereleases and other majors rejected). */
export function selectGreatest<T>(
  candidates: readonly T[],
  versionOf: (candidate: T) => string,
  pin: VersionPin,
  cliVersion?: string,
): T | undefined {
  let best: { candidate: T; version: semver.SemVer } | undefined;
  for (const candidate of candidates) {
    const version = acceptedVersion(versionOf(candidate), pin, cliVersion);
    if (version === undefined) continue;
    if (best === undefined || semver.gt(version, best.version)) best = { candidate, version };
  }
  return best?.candidate;
}

/**
 * Orders two recorded dependency versions, newest first: semantic versions by precedence,
 * dated versions by date, Debian package versions (`17.6-0+deb13u1`) by dpkg's ordering after
 * both, anything else by plain string order last. Used by retention.
 */
export function compareRecordedVersionsDescending(a: string, b: string): number {
  const ka = sortKey(a);
  const kb = sortKey(b);
  if (ka !== undefined && kb !== undefined) return semver.rcompare(ka, kb);
  if (ka !== undefined) return -1;
  if (kb !== undefined) return 1;
  const debianA = parseDebianVersion(a) !== undefined;
  const debianB = parseDebianVersion(b) !== undefined;
  if (debianA && debianB) return compareDebianVersions(b, a);
  if (debianA !== debianB) return debianA ? -1 : 1;
  return a < b ? 1 : a > b ? -1 : 0;
}

function sortKey(version: string): semver.SemVer | undefined {
  const dated = DATED.exec(version);
  if (dated !== null) return semver.parse(`${Number(dated[1])}.${Number(dated[2])}.0`) ?? undefined;
  return semver.parse(version) ?? undefined;
}
