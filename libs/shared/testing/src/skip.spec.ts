import { describeIf, describeUnless, itIf, which } from './skip';

describe('describeIf and itIf', () => {
  let written: string[];
  let spy: jest.SpyInstance;
  beforeEach(() => {
    written = [];
    spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
  });
  afterEach(() => spy.mockRestore());

  it("gives Jest's own describe and it, silently, where the tier can run", () => {
    expect(describeIf(true, 'unit-tier', 'unused')).toBe(describe);
    expect(itIf(true, 'unit-tier', 'unused')).toBe(it);
    expect(describeUnless(undefined, 'unit-tier')).toBe(describe);
    expect(written).toEqual([]);
  });

  it("gives Jest's own skip and prints the SKIPPED line once where it cannot", () => {
    expect(describeIf(false, 'unit-tier', 'no frobnicator here')).toBe(describe.skip);
    expect(describeUnless('no frobnicator here', 'unit-tier')).toBe(describe.skip);
    expect(itIf(false, 'unit-tier', 'no frobnicator here')).toBe(it.skip);
    expect(written).toEqual(['SKIPPED unit-tier: no frobnicator here\n']);
    itIf(false, 'other-tier', 'no widget');
    expect(written).toEqual([
      'SKIPPED unit-tier: no frobnicator here\n',
      'SKIPPED other-tier: no widget\n',
    ]);
  });
});

describe('which', () => {
  it('finds a program on PATH and not one that is absent', () => {
    expect(which('sh')).toMatch(/\/sh$/);
    expect(which('podmin-no-such-program')).toBeUndefined();
  });
});
