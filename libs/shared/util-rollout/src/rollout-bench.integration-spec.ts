import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

// bench/rollout.mjs bundles this library's planner on its own; run its quick fleet part here so
// a change to the planner or to what it loads cannot break the benchmark unnoticed. The run is
// in virtual time and seeded, so its budgets hold on any machine: exit 0 is asserted.
describe('bench/rollout.mjs --quick', () => {
  it('rolls 200 simulated nodes out without and with surge within every budget', async () => {
    const repo = path.resolve(__dirname, '../../../..');
    const run = await promisify(execFile)(process.execPath, ['bench/rollout.mjs', '--quick'], {
      cwd: repo,
    }).catch((err: { code: number; stdout: string; stderr: string }) => err);
    const code = 'code' in run ? run.code : 0;
    // A failed run's own words, rather than only its exit code.
    expect(code === 0 ? '' : `${run.stdout}\n${run.stderr}`).toBe('');
    expect(run.stderr).toBe('');
    expect(run.stdout).toMatch(/^rollout fleet: 200 nodes in one NodeGroup/m);
    expect(run.stdout).toMatch(/^maxUnavailable 10% \(maxUnavailable 20, maxSurge 0 of 200\)$/m);
    expect(run.stdout).toMatch(
      /^maxSurge 10%, maxUnavailable 0 \(maxUnavailable 0, maxSurge 20 of 200\)$/m,
    );
    for (const line of [
      /^ {2}waves \(admission batches\): \d+ \(10 at the limit\); largest 20 nodes; leader passes \d+$/gm,
      /^ {2}completion: [\d.]+ s; bound 12 × \(5 \+ 3 \+ 5\) s \+ 10 s = 166\.0 s; ratio [\d.]+ OK$/gm,
      /^ {2}bucket requests: \d+ \(1 GET, \d+ conditional PUT\); [\d.]+ per wave; budget <= 3 × \d+ waves at the limit \+ 5 = \d+ OK; [\d.]+ per wave at the limit \(unbudgeted\)$/gm,
    ])
      expect(run.stdout.match(line)).toHaveLength(2);
    expect(run.stdout).toMatch(
      /^ {2}invariants: nodes without an available Pod max 20 <= 20, nodes running two Pods max 0 <= 0 OK$/m,
    );
    expect(run.stdout).toMatch(
      /^ {2}invariants: nodes without an available Pod max 0 <= 0, nodes running two Pods max 20 <= 20 OK$/m,
    );
    expect(run.stdout).toMatch(
      /^node part: run with --node after `npm run demo` \(see bench\/README\.md\)$/m,
    );
  }, 60_000);
});
