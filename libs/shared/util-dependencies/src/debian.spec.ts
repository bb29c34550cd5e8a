import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import {
  compareDebianVersions,
  isStableDebianVersion,
  parseDebianVersion,
  parsePackagesIndex,
  recordedDebianVersion,
  selectDebianPackage,
} from './debian';
import { compareRecordedVersionsDescending } from './versions';

const fixture = (name: string) => readFileSync(path.join(__dirname, '__fixtures__', name), 'utf8');
const sign = (n: number) => Math.sign(n);

/** Pairs whose order dpkg defines, each written `lower < higher`. */
const ORDERED: ReadonlyArray<[string, string]> = [
  ['2.0-1', '1:2.0~rc1-1'],
  ['2.0~rc1-1', '2.0-1'],
  ['1.0~~', '1.0~'],
  ['1.0~', '1.0'],
  ['1.0', '1.0a'],
  ['1.0a', '1.0+b1'],
  ['1.0-1', '1.0-1+deb13u1'],
  ['17.6-0+deb13u1', '17.10-0+deb13u1'],
  ['17.6-0+deb13u1', '17.6-0+deb13u2'],
  ['17.6-0+deb13u1~bpo1', '17.6-0+deb13u1'],
  ['5.0.2', '5.0.10'],
  ['4.9.99', '5.0.0'],
  ['1.2.3', '1.2.3-1'],
  ['0:1.0', '1:0.1'],
  ['1.0.0', '1.0.0.0'],
  ['9.9', '10.0'],
  ['1.0-1', '1.0-1.1'],
  ['1.0-1', '1.0-a'],
];

describe('compareDebianVersions', () => {
  it.each(ORDERED)('orders %s before %s, in both directions', (lower, higher) => {
    expect(sign(compareDebianVersions(lower, higher))).toBe(-1);
    expect(sign(compareDebianVersions(higher, lower))).toBe(1);
  });

  it('treats equal versions, leading zeros and a missing revision as dpkg does', () => {
    expect(compareDebianVersions('1:2.0~rc1-1', '1:2.0~rc1-1')).toBe(0);
    expect(compareDebianVersions('1.002', '1.2')).toBe(0);
    expect(compareDebianVersions('0:1.0', '1.0')).toBe(0);
    expect(compareDebianVersions('1.0', '1.0-0')).toBe(0);
  });

  const dpkg = ['/usr/bin/dpkg', '/bin/dpkg'].find((p) => existsSync(p));
  // Without dpkg the comparison is Jest's own skip, counted as skipped, never as passed.
  if (dpkg === undefined) console.log('SKIPPED dpkg-compare: no dpkg on this machine');
  (dpkg === undefined ? it.skip : it)('agrees with dpkg --compare-versions itself', () => {
    for (const [lower, higher] of ORDERED) {
      // `lt` exits 0 when true; execFileSync throws otherwise.
      expect(() =>
        execFileSync(dpkg as string, ['--compare-versions', lower, 'lt', higher]),
      ).not.toThrow();
      expect(() =>
        execFileSync(dpkg as string, ['--compare-versions', higher, 'lt', lower]),
      ).toThrow();
    }
  });

  it('refuses what is not a Debian version', () => {
    for (const bad of ['', 'a1.0', '1.0-', 'x:1.0', '1.0 ', '1:', '1.0_1', '1.0-1:2', '-1']) {
      expect(parseDebianVersion(bad)).toBeUndefined();
    }
    expect(() => compareDebianVersions('1.0', 'nope')).toThrow(/"nope" is not one/);
    expect(parseDebianVersion('1:2.0~rc1-1')).toEqual({
      epoch: 1,
      upstream: '2.0~rc1',
      revision: '1',
    });
    expect(parseDebianVersion('17.6-0+deb13u1')).toEqual({
      epoch: 0,
      upstream: '17.6-0+deb13u1'.split('-')[0],
      revision: '0+deb13u1',
    });
    expect(parseDebianVersion('1.2-3-4')).toEqual({ epoch: 0, upstream: '1.2-3', revision: '4' });
  });
});

describe('stable versions and selection', () => {
  it('rejects ~ pre-releases, other majors and non-release upstreams under a major pin', () => {
    const five = { kind: 'debian', major: 5 } as const;
    expect(isStableDebianVersion('5.0.2', five)).toBe(true);
    expect(isStableDebianVersion('1:5.0.2-1', five)).toBe(true);
    expect(isStableDebianVersion('5.0.0~rc1', five)).toBe(false);
    expect(isStableDebianVersion('5.0.0rc1', five)).toBe(false);
    expect(isStableDebianVersion('6.0.0', five)).toBe(false);
    expect(isStableDebianVersion('50.0.0', five)).toBe(false);
    expect(isStableDebianVersion('17.6-0+deb13u1', { kind: 'debian' })).toBe(true);
    expect(isStableDebianVersion('17.6-0+deb13u1~bpo', { kind: 'debian' })).toBe(false);
  });

  it('picks the greatest stable Fluent Bit 5 of the architecture from a real-format index', () => {
    const records = parsePackagesIndex(
      fixture('fluentbit-trixie-main-binary-arm64.Packages'),
      'fluentbit arm64',
    );
    expect(records.map((r) => r.version)).toEqual([
      '4.2.1',
      '5.0.0~rc1',
      '5.0.2',
      '5.0.10',
      '6.0.0',
    ]);
    const chosen = selectDebianPackage(records, 'fluent-bit', 'arm64', {
      kind: 'debian',
      major: 5,
    });
    expect(chosen).toEqual({
      package: 'fluent-bit',
      version: '5.0.10',
      architecture: 'arm64',
      filename: 'pool/main/f/fluent-bit/fluent-bit_5.0.10_arm64.deb',
      size: 17731002,
      sha256: 'ad9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e',
      sha512:
        '44a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f80',
    });
    expect(selectDebianPackage(records, 'fluent-bit', 'amd64', { kind: 'debian', major: 5 })).toBe(
      undefined,
    );
    expect(selectDebianPackage(records, 'fluent-bit', 'arm64', { kind: 'debian', major: 7 })).toBe(
      undefined,
    );
  });

  it("reads only the wanted package of Debian's index and takes Architecture: all", () => {
    const text = fixture('debian-trixie-main-binary-amd64.Packages');
    const libpq = parsePackagesIndex(text, 'debian amd64', { only: new Set(['libpq5']) });
    expect(libpq).toEqual([
      {
        package: 'libpq5',
        version: '17.6-0+deb13u1',
        architecture: 'amd64',
        filename: 'pool/main/p/postgresql-17/libpq5_17.6-0+deb13u1_amd64.deb',
        size: 227056,
        sha256: '3f7e2c1b0a9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f',
      },
    ]);
    const all = parsePackagesIndex(text, 'debian amd64');
    expect(selectDebianPackage(all, 'tzdata', 'amd64', { kind: 'debian' })?.architecture).toBe(
      'all',
    );
  });

  it('records a version without its epoch, as pool file names do', () => {
    expect(recordedDebianVersion('1:2.0-1')).toBe('2.0-1');
    expect(recordedDebianVersion('17.6-0+deb13u1')).toBe('17.6-0+deb13u1');
  });

  it('lets retention order Debian versions by dpkg rules, newest first', () => {
    const sorted = ['17.6-0+deb13u1', '17.10-0+deb13u1', '17.9-0+deb13u2'].sort(
      compareRecordedVersionsDescending,
    );
    expect(sorted).toEqual(['17.10-0+deb13u1', '17.9-0+deb13u2', '17.6-0+deb13u1']);
  });
});

describe('parsePackagesIndex strictness', () => {
  const stanza = [
    'Package: libpq5',
    'Version: 17.6-0+deb13u1',
    'Architecture: amd64',
    'Filename: pool/main/p/postgresql-17/libpq5_17.6-0+deb13u1_amd64.deb',
    'Size: 227056',
    `SHA256: ${'a'.repeat(64)}`,
  ];
  const parse = (lines: string[]) => () => parsePackagesIndex(`${lines.join('\n')}\n`, 'test');

  it('accepts a minimal stanza, blank-line runs and case-insensitive field names', () => {
    const lower = stanza.map((l) => l.replace(/^[A-Z0-9]+/i, (n) => n.toLowerCase()));
    expect(
      parse(['', ...stanza, '', '', ...lower.map((l) => l.replace('17.6', '17.7'))])(),
    ).toHaveLength(2);
  });

  it.each([
    ['a duplicate field', [...stanza, 'size: 1'], /field size appears twice/],
    [
      'a line without a colon',
      [...stanza, 'garbage'],
      /line 7: "garbage" is not a "Field: value" line/,
    ],
    ['a comment', ['# comment', ...stanza], /line 1: "# comment"/],
    ['PGP armour', ['-----BEGIN PGP SIGNED MESSAGE-----', ...stanza], /line 1/],
    ['a continuation without a field', [' orphan', ...stanza], /continuation line outside a field/],
    ['a missing Filename', stanza.filter((l) => !l.startsWith('Filename')), /no Filename field/],
    ['a missing Package', stanza.slice(1), /no Package field/],
    [
      'a bad version',
      stanza.map((l) => l.replace('17.6-0+deb13u1', 'v17')),
      /Version "v17" of libpq5/,
    ],
    [
      'a parent path',
      stanza.map((l) => l.replace('pool/main', 'pool/../main')),
      /not a relative path/,
    ],
    ['an absolute path', stanza.map((l) => l.replace('pool/', '/pool/')), /not a relative path/],
    [
      'a non-.deb file',
      stanza.map((l) => l.replace('.deb', '.tar')),
      /not a relative path to a .deb/,
    ],
    ['a bad size', stanza.map((l) => l.replace('227056', '-1')), /Size "-1" is not a size/],
    [
      'a short SHA256',
      stanza.map((l) => l.replace('a'.repeat(64), 'a'.repeat(63))),
      /SHA256 .* is not a SHA-256/,
    ],
    [
      'an uppercase SHA512',
      [...stanza, `SHA512: ${'A'.repeat(128)}`],
      /SHA512 .* is not a SHA-512/,
    ],
  ])('refuses %s, naming the line and field', (_label, lines, message) => {
    expect(parse(lines)).toThrow(message);
    expect(parse(lines)).toThrow(/reading the package index test: line \d+/);
  });

  it('refuses carriage returns and two different records of one version', () => {
    expect(() => parsePackagesIndex(`${stanza.join('\r\n')}\r\n`, 'crlf')).toThrow(
      /line 1: carriage return/,
    );
    const other = stanza.map((l) => l.replace('a'.repeat(64), 'b'.repeat(64)));
    expect(parse([...stanza, '', ...other])).toThrow(
      /libpq5 17.6-0\+deb13u1 amd64 is listed twice with different files or digests/,
    );
    expect(parse([...stanza, '', ...stanza])()).toHaveLength(1);
  });

  it('checks only the syntax of stanzas it was not asked to read', () => {
    const unwanted = ['Package: other', 'Version: not a version'];
    expect(
      parsePackagesIndex([...unwanted, '', ...stanza].join('\n'), 'x', {
        only: new Set(['libpq5']),
      }),
    ).toHaveLength(1);
    expect(() =>
      parsePackagesIndex(['Package: other', 'oops', '', ...stanza].join('\n'), 'x', {
        only: new Set(['libpq5']),
      }),
    ).toThrow(/line 2/);
  });
});
