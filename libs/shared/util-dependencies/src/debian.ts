import { PodminError } from '@podmin/util-errors';

/**
 * Debian package versions and `Packages` indexes, written by hand: no maintained npm library
 * implements dpkg's version ordering or a strict deb822 `Packages` reader (the few that exist
 * are unmaintained or lenient), and both are short, fully specified algorithms
 * (deb-version(7), Debian Policy §5.1 and §5.6.12, the repository format's `Packages` fields).
 */

/** A Debian version split as deb-version(7) defines it: `[epoch:]upstream[-revision]`. */
export interface DebianVersion {
  epoch: number;
  upstream: string;
  /** `''` for a native package (no revision), which dpkg orders like `0`. */
  revision: string;
}

const EPOCH = /^(?:0|[1-9]\d{0,8})$/;
const UPSTREAM = /^\d[A-Za-z0-9.+~-]*$/;
const REVISION = /^[A-Za-z0-9.+~]+$/;

/**
 * Parses a Debian version strictly: an optional decimal epoch, an upstream version that starts
 * with a digit and holds only alphanumerics and `.+~-` (a hyphen only when a revision follows),
 * and an optional revision of alphanumerics and `.+~`. Undefined when it is not one.
 */
export function parseDebianVersion(text: string): DebianVersion | undefined {
  if (text.length === 0 || text.length > 256 || text !== text.trim()) return undefined;
  const colon = text.indexOf(':');
  let epoch = 0;
  let rest = text;
  if (colon !== -1) {
    const epochText = text.slice(0, colon);
    if (!EPOCH.test(epochText)) return undefined;
    epoch = Number(epochText);
    rest = text.slice(colon + 1);
  }
  const hyphen = rest.lastIndexOf('-');
  const upstream = hyphen === -1 ? rest : rest.slice(0, hyphen);
  const revision = hyphen === -1 ? '' : rest.slice(hyphen + 1);
  if (!UPSTREAM.test(upstream)) return undefined;
  if (hyphen !== -1 && !REVISION.test(revision)) return undefined;
  return { epoch, upstream, revision };
}

const isDigit = (c: string) => c >= '0' && c <= '9';
const isAlpha = (c: string) => (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');

/** dpkg's weight of one non-digit character: `~` before the end, the end before letters, letters before the rest. */
function order(c: string): number {
  if (c === '') return 0;
  if (isDigit(c)) return 0;
  if (isAlpha(c)) return c.charCodeAt(0);
  if (c === '~') return -1;
  return c.charCodeAt(0) + 256;
}

/**
 * dpkg's `verrevcmp`: alternating non-digit runs (compared character by character with
 * {@link order}) and digit runs (compared numerically, leading zeros ignored).
 */
function compareFragment(a: string, b: string): number {
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    while ((i < a.length && !isDigit(a.charAt(i))) || (j < b.length && !isDigit(b.charAt(j)))) {
      const ac = order(a.charAt(i));
      const bc = order(b.charAt(j));
      if (ac !== bc) return ac - bc;
      i++;
      j++;
    }
    while (a.charAt(i) === '0') i++;
    while (b.charAt(j) === '0') j++;
    let firstDiff = 0;
    while (isDigit(a.charAt(i)) && isDigit(b.charAt(j))) {
      if (firstDiff === 0) firstDiff = a.charCodeAt(i) - b.charCodeAt(j);
      i++;
      j++;
    }
    if (isDigit(a.charAt(i))) return 1;
    if (isDigit(b.charAt(j))) return -1;
    if (firstDiff !== 0) return firstDiff;
  }
  return 0;
}

/**
 * Orders two Debian versions as `dpkg --compare-versions` does: epoch numerically, then
 * upstream version, then revision, each with dpkg's character ordering (`~` sorts before
 * everything, even the end of the string). Negative, zero or positive; throws on a version
 * that does not parse (a caller bug: parse first).
 */
export function compareDebianVersions(a: string, b: string): number {
  const va = parseDebianVersion(a);
  const vb = parseDebianVersion(b);
  if (va === undefined || vb === undefined) {
    throw new Error(`comparing Debian versions: ${JSON.stringify(va ? b : a)} is not one`);
  }
  if (va.epoch !== vb.epoch) return va.epoch - vb.epoch;
  return compareFragment(va.upstream, vb.upstream) || compareFragment(va.revision, vb.revision);
}

/** One binary package record of a `Packages` index, with the fields podmin uses. */
export interface DebianPackage {
  package: string;
  version: string;
  architecture: string;
  /** Pool path relative to the repository root, e.g. `pool/main/p/postgresql-17/libpq5_…deb`. */
  filename: string;
  /** Exact size in bytes. */
  size: number;
  /** Lowercase hex, when the index lists it. */
  sha256?: string;
  /** Lowercase hex, when the index lists it. */
  sha512?: string;
}

const FIELD_NAME = /^[!-9;-~][!-9;-~]*$/;
const PACKAGE_NAME = /^[a-z0-9][a-z0-9+.-]+$/;
const ARCHITECTURE = /^[a-z0-9][a-z0-9-]*$/;
const FILENAME_SEGMENT = /^[A-Za-z0-9][A-Za-z0-9.+~_-]*$/;
const SIZE = /^(?:0|[1-9]\d{0,14})$/;
const HEX = { sha256: /^[0-9a-f]{64}$/, sha512: /^[0-9a-f]{128}$/ } as const;

/** Options of {@link parsePackagesIndex}. */
export interface ParsePackagesOptions {
  /**
   * Package names whose records are read and checked in full; other stanzas are checked only
   * for their syntax and a Package field (a distribution's index holds tens of thousands).
   * Absent: every stanza is read in full.
   */
  only?: ReadonlySet<string>;
}

/**
 * Parses a Debian repository `Packages` index strictly (deb822, Debian Policy §5.1): stanzas
 * separated by blank lines; `Name: value` fields with case-insensitive names, each at most once
 * per stanza; continuation lines only after a field; no comments, carriage returns or PGP
 * armour. Every stanza needs Package; every record read needs Version (a valid Debian
 * version), Architecture, Filename (a relative pool path without `.` or `..` segments), Size,
 * and well-formed SHA256/SHA512 when present. Two records of one package, version and
 * architecture must agree. Throws INVALID_ARGUMENT naming `source`, the line and the field.
 */
export function parsePackagesIndex(
  text: string,
  source: string,
  options: ParsePackagesOptions = {},
): DebianPackage[] {
  const fail = (line: number, why: string) =>
    new PodminError(
      'INVALID_ARGUMENT',
      `reading the package index ${source}: line ${line}: ${why}`,
      {
        fault: 'system',
      },
    );
  if (text.includes('\r'))
    throw fail(
      text.slice(0, text.indexOf('\r')).split('\n').length,
      'carriage return (the index must use LF line ends)',
    );
  const records: DebianPackage[] = [];
  const seen = new Map<string, DebianPackage>();
  const lines = text.split('\n');
  let stanza: Map<string, { value: string; line: number }> | undefined;
  let stanzaLine = 0;
  let last: { value: string; line: number } | undefined;

  const finish = () => {
    if (stanza === undefined) return;
    const record = readStanza(stanza, stanzaLine, options.only, fail);
    stanza = undefined;
    last = undefined;
    if (record === undefined) return;
    const key = `${record.package} ${record.version} ${record.architecture}`;
    const earlier = seen.get(key);
    if (earlier !== undefined) {
      if (
        earlier.filename !== record.filename ||
        earlier.size !== record.size ||
        earlier.sha256 !== record.sha256 ||
        earlier.sha512 !== record.sha512
      ) {
        throw fail(stanzaLine, `${key} is listed twice with different files or digests`);
      }
      return;
    }
    seen.set(key, record);
    records.push(record);
  };

  lines.forEach((line, index) => {
    const number = index + 1;
    if (/^[ \t]*$/.test(line)) {
      finish();
      return;
    }
    if (line.startsWith(' ') || line.startsWith('\t')) {
      if (last === undefined) throw fail(number, 'a continuation line outside a field');
      last.value += `\n${line}`;
      return;
    }
    const colon = line.indexOf(':');
    const name = colon === -1 ? '' : line.slice(0, colon);
    if (colon === -1 || !FIELD_NAME.test(name) || name.startsWith('#') || name.startsWith('-')) {
      throw fail(number, `${JSON.stringify(line.slice(0, 60))} is not a "Field: value" line`);
    }
    if (stanza === undefined) {
      stanza = new Map();
      stanzaLine = number;
    }
    const key = name.toLowerCase();
    if (stanza.has(key)) throw fail(number, `field ${name} appears twice in one stanza`);
    last = { value: line.slice(colon + 1).trim(), line: number };
    stanza.set(key, last);
  });
  finish();
  return records;
}

function readStanza(
  stanza: ReadonlyMap<string, { value: string; line: number }>,
  line: number,
  only: ReadonlySet<string> | undefined,
  fail: (line: number, why: string) => PodminError,
): DebianPackage | undefined {
  const field = (name: string, pattern: RegExp, what: string, required: boolean) => {
    const entry = stanza.get(name.toLowerCase());
    if (entry === undefined) {
      if (required) throw fail(line, `the stanza has no ${name} field`);
      return undefined;
    }
    if (!pattern.test(entry.value)) {
      throw fail(entry.line, `${name} ${JSON.stringify(entry.value.slice(0, 80))} is not ${what}`);
    }
    return entry.value;
  };
  const name = field('Package', PACKAGE_NAME, 'a Debian package name', true) as string;
  if (only !== undefined && !only.has(name)) return undefined;
  const versionEntry = stanza.get('version');
  if (versionEntry === undefined) throw fail(line, `the stanza of ${name} has no Version field`);
  if (parseDebianVersion(versionEntry.value) === undefined) {
    throw fail(
      versionEntry.line,
      `Version ${JSON.stringify(versionEntry.value)} of ${name} is not a Debian version`,
    );
  }
  const architecture = field('Architecture', ARCHITECTURE, 'one architecture name', true) as string;
  const filename = field('Filename', /^\S+$/, 'a pool path', true) as string;
  const segments = filename.split('/');
  if (!segments.every((s) => FILENAME_SEGMENT.test(s)) || !filename.endsWith('.deb')) {
    throw fail(
      stanza.get('filename')?.line ?? line,
      `Filename ${JSON.stringify(filename)} of ${name} is not a relative path to a .deb (segments of [A-Za-z0-9.+~_-], none empty, . or ..)`,
    );
  }
  const size = Number(field('Size', SIZE, 'a size in bytes', true));
  const sha256 = field('SHA256', HEX.sha256, 'a SHA-256 digest (64 lowercase hex)', false);
  const sha512 = field('SHA512', HEX.sha512, 'a SHA-512 digest (128 lowercase hex)', false);
  return {
    package: name,
    version: versionEntry.value,
    architecture,
    filename,
    size,
    ...(sha256 === undefined ? {} : { sha256 }),
    ...(sha512 === undefined ? {} : { sha512 }),
  };
}

/** Which versions of a Debian package are acceptable. */
export interface DebianVersionPin {
  kind: 'debian';
  /**
   * The upstream major a release must have, which also demands a plain release upstream
   * version (digits and dots only: `5.0.3`). Absent: the distribution's current version, any
   * upstream form.
   */
  major?: number;
}

/**
 * Whether `version` is a stable release under `pin`: never a `~` version (Debian's marker of
 * a pre-release, which sorts before the release), and with a major pin an upstream version of
 * only digits and dots whose first number is that major.
 */
export function isStableDebianVersion(version: string, pin: DebianVersionPin): boolean {
  const parsed = parseDebianVersion(version);
  if (parsed === undefined || version.includes('~')) return false;
  if (pin.major === undefined) return true;
  const match = /^(\d+)(?:\.\d+)*$/.exec(parsed.upstream);
  return match !== null && Number(match[1]) === pin.major;
}

/**
 * The greatest stable record of `name` for `architecture` (or `all`) under `pin`, by dpkg's
 * ordering; undefined when there is none.
 */
export function selectDebianPackage(
  records: readonly DebianPackage[],
  name: string,
  architecture: string,
  pin: DebianVersionPin,
): DebianPackage | undefined {
  let best: DebianPackage | undefined;
  for (const record of records) {
    if (record.package !== name) continue;
    if (record.architecture !== architecture && record.architecture !== 'all') continue;
    if (!isStableDebianVersion(record.version, pin)) continue;
    if (best === undefined || compareDebianVersions(record.version, best.version) > 0)
      best = record;
  }
  return best;
}

/**
 * The version podmin records for a Debian package: the version without its epoch, as Debian's
 * own pool file names drop it (`libpq5_17.6-0+deb13u1_amd64.deb`), so it fits an object key.
 */
export function recordedDebianVersion(version: string): string {
  const colon = version.indexOf(':');
  return colon === -1 ? version : version.slice(colon + 1);
}
