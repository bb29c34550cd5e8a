import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

// bench/snapshot.mjs bundles the coordinator's snapshot code on its own; run once here so a
// change to what that code loads cannot break the benchmark unnoticed. Timings are not asserted.
describe('bench/snapshot.mjs', () => {
  it('computes, encodes and decodes 1,000 and 10,000 Services once, printing every line', async () => {
    const repo = path.resolve(__dirname, '../../../../..');
    const { stdout } = await promisify(execFile)(process.execPath, ['bench/snapshot.mjs', '1'], {
      cwd: repo,
    });
    for (const services of ['1000', '10000']) {
      expect(stdout).toContain(`${services} Services × 3 backends`);
    }
    for (const line of [
      /compute \(select, sort, revision\) +[\d.]+ ms/g,
      /strict decode \(re-encode, digest\) +[\d.]+ ms/g,
      /size of dns\/services\.pb +\d+ bytes/g,
    ])
      expect(stdout.match(line)).toHaveLength(2);
  }, 120_000);
});
