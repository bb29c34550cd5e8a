// The real release in a real process: a Node.js child loads this library's code through koffi,
// gives back its clean file pages, and must go on computing the same results afterwards.
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const SCRIPT = `
const fs = require('node:fs');
const crypto = require('node:crypto');
const { releaseCleanFilePages } = require(process.env.MODULE);
const fileKiB = () => {
  const t = fs.readFileSync('/proc/self/smaps_rollup', 'utf8');
  const kib = (k) => Number(new RegExp('^' + k + ':\\\\s+(\\\\d+)', 'm').exec(t)[1]);
  return kib('Rss') - kib('Anonymous');
};
const digest = () => crypto.createHash('sha256').update('podmin'.repeat(1000)).digest('hex');
const state = { list: Array.from({ length: 1000 }, (_, i) => i * 3) };
const before = { file: fileKiB(), digest: digest() };
const result = releaseCleanFilePages();
const after = { file: fileKiB(), digest: digest(), sum: state.list.reduce((a, b) => a + b, 0) };
process.stdout.write(JSON.stringify({ before, result, after }));
`;

describe('releaseCleanFilePages (real process)', () => {
  it('drops most of the resident file pages, and the process computes the same afterwards', () => {
    const run = spawnSync(
      process.execPath,
      ['-r', require.resolve('ts-node/register/transpile-only'), '-e', SCRIPT],
      {
        encoding: 'utf8',
        env: {
          ...process.env,
          MODULE: path.join(__dirname, 'clean-pages.ts'),
          TS_NODE_COMPILER_OPTIONS: JSON.stringify({ module: 'commonjs' }),
        },
      },
    );
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const { before, result, after } = JSON.parse(run.stdout) as {
      before: { file: number; digest: string };
      result: { regions: number; releasedKiB: number; refused: number };
      after: { file: number; digest: string; sum: number };
    };
    expect(result.refused).toBe(0);
    expect(result.regions).toBeGreaterThan(0);
    // The node binary alone holds tens of MiB at start; most of it is not needed again here.
    expect(before.file).toBeGreaterThan(10 * 1024);
    expect(after.file).toBeLessThan(before.file / 2);
    expect(after.digest).toBe(before.digest);
    expect(after.sum).toBe(1_498_500);
  });
});
