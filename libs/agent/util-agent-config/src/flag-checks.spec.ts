import type { FieldProblem } from '@podmin/util-errors';
import { checkClusterNodegroup, requiredFlag } from './flag-checks';

describe('requiredFlag', () => {
  it('returns a set value and adds nothing', () => {
    const problems: FieldProblem[] = [];
    expect(requiredFlag({ out: '/run/x' }, 'out', problems)).toBe('/run/x');
    expect(problems).toEqual([]);
  });

  it.each([undefined, ''])('adds "is required" for %j', (value) => {
    const problems: FieldProblem[] = [];
    expect(requiredFlag({ out: value }, 'out', problems)).toBe('');
    expect(problems).toEqual([{ field: '--out', message: 'is required' }]);
  });

  it('adds no second problem to a flag that already has one', () => {
    const problems: FieldProblem[] = [{ field: '--out', message: 'needs a value' }];
    requiredFlag({}, 'out', problems);
    expect(problems).toEqual([{ field: '--out', message: 'needs a value' }]);
  });
});

describe('checkClusterNodegroup', () => {
  it('accepts DNS labels and skips unset values', () => {
    const problems: FieldProblem[] = [];
    checkClusterNodegroup('demo', 'workers', problems);
    checkClusterNodegroup('', '', problems);
    expect(problems).toEqual([]);
  });

  it('names each bad flag', () => {
    const problems: FieldProblem[] = [];
    checkClusterNodegroup('a'.repeat(41), 'Not_A_Label', problems);
    expect(problems.map((p) => p.field)).toEqual(['--cluster', '--nodegroup']);
    expect(problems[0]?.message).toMatch(/at most 40/);
  });
});
