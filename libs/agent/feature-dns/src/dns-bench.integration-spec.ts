import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

// bench/dns.mjs --quick: one short round of every line, so the benchmark keeps running as the
// code it bundles changes. Timings on a shared machine are not asserted: exit 1 is a budget
// missed, 2 a failure. dnsperf and nsd come from tools/setup/apt-deps.sh.
describe('bench/dns.mjs --quick', () => {
  it('serves dnsperf from agent-dns and NSD, and prints every budget line', async () => {
    const repo = path.resolve(__dirname, '../../../..');
    const run = await promisify(execFile)(process.execPath, ['bench/dns.mjs', '--quick'], {
      cwd: repo,
      maxBuffer: 16 * 1024 * 1024,
    }).catch((err: { code: number; stdout: string; stderr: string }) => err);
    const code = 'code' in run ? run.code : 0;
    // A failed run's own words, rather than only its exit code.
    expect(code === 0 || code === 1 ? '' : run.stderr).toBe('');
    expect([0, 1]).toContain(code);
    for (const line of [
      /^agent-dns UDP: recvmmsg-worker; idle RSS [\d.]+ MiB/m,
      /^ratio agent-dns \/ NSD = [\d.]+ \(budget >= 0\.30, goal 0\.50\) (OK|OVER BUDGET)$/m,
      /^agent-dns, leader recomputing at \d+ q\/s: p50 [\d.]+ ms, p99 [\d.]+ ms/m,
      /^p99 \/ budget \(2 ms\) = [\d.]+ (OK|OVER BUDGET)$/m,
      /^agent-dns status: \d+ answered, 0 malformed, 1000 Services$/m,
    ])
      expect(run.stdout).toMatch(line);
  }, 180_000);
});
