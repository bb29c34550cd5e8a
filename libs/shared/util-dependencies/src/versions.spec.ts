import { acceptedVersion, compareRecordedVersionsDescending, selectGreatest } from './versions';

describe('selectGreatest', () => {
  const major2 = { kind: 'semver', major: 2 } as const;

  it('rejects prereleases and other majors and picks the greatest semantic version', () => {
    const versions = ['2.1.4', '2.2.0-rc.1', '3.0.0', '1.7.9', '2.1.10', 'nightly', '2.0.0+meta'];
    expect(selectGreatest(versions, (v) => v, major2)).toBe('2.1.10');
  });

  it('pins the minor when the catalog does', () => {
    const versions = ['1.35.9', '1.36.2', '1.36.10', '1.37.0', '1.36.11-beta.0'];
    expect(selectGreatest(versions, (v) => v, { kind: 'semver', major: 1, minor: 36 })).toBe(
      '1.36.10',
    );
  });

  it('orders dated gVisor releases by date then patch', () => {
    const dated = ['20260803.0', '20260803.1', '20251201.4', 'nightly-20270101'];
    expect(selectGreatest(dated, (v) => v, { kind: 'dated' })).toBe('20260803.1');
  });

  it('accepts only the CLI version for the agent', () => {
    expect(acceptedVersion('0.1.0', { kind: 'cli' }, '0.1.0')).toBeDefined();
    expect(acceptedVersion('0.2.0', { kind: 'cli' }, '0.1.0')).toBeUndefined();
    expect(selectGreatest(['0.2.0'], (v) => v, { kind: 'cli' }, '0.1.0')).toBeUndefined();
  });
});

describe('compareRecordedVersionsDescending', () => {
  it('sorts newest first across semantic, dated and unparsable versions', () => {
    expect(['2.1.4', '2.10.0', '2.9.1'].sort(compareRecordedVersionsDescending)).toEqual([
      '2.10.0',
      '2.9.1',
      '2.1.4',
    ]);
    expect(['20250101.0', '20260803.0'].sort(compareRecordedVersionsDescending)).toEqual([
      '20260803.0',
      '20250101.0',
    ]);
    expect(['weird', '1.0.0'].sort(compareRecordedVersionsDescending)).toEqual(['1.0.0', 'weird']);
  });
});
