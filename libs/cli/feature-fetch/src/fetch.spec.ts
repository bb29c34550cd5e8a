import { hasCode } from '@podmin/util-errors';
import { parseArchitectures } from './fetch';

describe('parseArchitectures', () => {
  it('defaults to both, splits commas, dedupes and sorts', () => {
    expect(parseArchitectures([])).toEqual(['amd64', 'arm64']);
    expect(parseArchitectures(['arm64,amd64', 'arm64'])).toEqual(['amd64', 'arm64']);
    expect(parseArchitectures(['arm64'])).toEqual(['arm64']);
  });

  it('rejects other architectures', () => {
    let caught: unknown;
    try {
      parseArchitectures(['amd64,riscv64']);
    } catch (err) {
      caught = err;
    }
    expect(hasCode(caught, 'INVALID_ARGUMENT')).toBe(true);
    expect((caught as Error).message).toContain('riscv64');
  });
});
