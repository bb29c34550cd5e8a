#!/usr/bin/env node
// Budget: `podmin validate` on a small manifest starts within 2.5× a bare `node -e 0`.
// Runs both commands interleaved N times in one run and prints the ratio of medians.
//   node bench/cli-start.mjs [runs]
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const bin = path.join(root, 'dist/bin/podmin.cjs');
if (!fs.existsSync(bin)) {
  console.error(`${bin} is missing; run \`npm run build\` first`);
  process.exit(2);
}
const runs = Number(process.argv[2] ?? 30);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-bench-'));
const env = {
  ...process.env,
  HOME: dir,
  XDG_CONFIG_HOME: path.join(dir, 'c'),
  XDG_DATA_HOME: path.join(dir, 'd'),
  XDG_CACHE_HOME: path.join(dir, 'k'),
};
const init = spawnSync(
  process.execPath,
  [bin, 'init', 'web', '-g', 'default', '--image', 'hello:v1', '--service'],
  { cwd: dir, env },
);
if (init.status !== 0) throw new Error(init.stderr.toString());

const time = (args) => {
  const start = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { cwd: dir, env, stdio: 'ignore' });
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}`);
  return Number(process.hrtime.bigint() - start) / 1e6;
};
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const bare = [];
const validate = [];
for (let i = 0; i < 3; i++) {
  time(['-e', '0']);
  time([bin, 'validate', '-f', 'daemonset.yaml']);
}
for (let i = 0; i < runs; i++) {
  bare.push(time(['-e', '0']));
  validate.push(time([bin, 'validate', '-f', 'daemonset.yaml']));
}
fs.rmSync(dir, { recursive: true, force: true });
const ratio = median(validate) / median(bare);
console.log(`node -e 0 median: ${median(bare).toFixed(1)} ms`);
console.log(`podmin validate median: ${median(validate).toFixed(1)} ms`);
console.log(
  `cli-start ratio: ${ratio.toFixed(2)}x (budget <= 2.5x) ${ratio <= 2.5 ? 'OK' : 'OVER BUDGET'}`,
);
