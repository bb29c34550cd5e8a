import { PodminError } from '@podmin/util-errors';

/** Hash algorithms publishers use for release checksums, strongest first. */
export type ChecksumAlgorithm = 'sha512' | 'sha256';

const HEX_LENGTH: Record<ChecksumAlgorithm, number> = { sha256: 64, sha512: 128 };

/**
 * Reads the digest of `fileName` from a checksum file: a bare hex digest (dl.k8s.io,
 * gVisor), `<hex>  <name>` / `<hex> *<name>` lines (sha256sum output as containerd, CNI,
 * CoreDNS and Node.js publish it). A single-entry file may name the artifact differently (a
 * path prefix); a multi-entry file must list `fileName`. Returns `<algorithm>:<hex>`.
 */
export function parseChecksumFile(
  text: string,
  fileName: string,
  algorithm: ChecksumAlgorithm,
  source: string,
): string {
  const length = HEX_LENGTH[algorithm];
  const entries: Array<{ hex: string; name: string | undefined }> = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    const match = /^([0-9a-fA-F]+)(?:\s+\*?(\S.*))?$/.exec(line);
    if (match === null || match[1] === undefined || match[1].length !== length) {
      throw new ChecksumFileError(
        source,
        `line ${JSON.stringify(line.slice(0, 80))} is not a ${algorithm} entry`,
      );
    }
    entries.push({ hex: match[1].toLowerCase(), name: match[2]?.trim() });
  }
  if (entries.length === 0) throw new ChecksumFileError(source, 'it is empty');
  const named = entries.filter((e) => e.name !== undefined && baseName(e.name) === fileName);
  if (named.length > 1 && new Set(named.map((e) => e.hex)).size > 1) {
    throw new ChecksumFileError(source, `it lists ${fileName} with different digests`);
  }
  const chosen = named[0] ?? (entries.length === 1 ? entries[0] : undefined);
  if (chosen === undefined) throw new ChecksumFileError(source, `it does not list ${fileName}`);
  return `${algorithm}:${chosen.hex}`;
}

function baseName(name: string): string {
  const slash = name.lastIndexOf('/');
  return slash === -1 ? name : name.slice(slash + 1);
}

/** A publisher's checksum file that cannot be read as one. */
export class ChecksumFileError extends PodminError {
  constructor(source: string, why: string) {
    super('INVALID_ARGUMENT', `reading checksum file ${source}: ${why}`, { fault: 'system' });
  }
}
