#!/usr/bin/env node
// Budgets (DESIGN.md §8, issues 20 and 35): `podmin validate -f` on a small manifest starts
// within 1.2× a bare `node -e 0` with a warm code cache and within 1.5× on the first run after
// install (an empty cache directory: a fresh XDG_CACHE_HOME for every such run); `podmin --help`
// within 1.5× warm, `podmin deploy` to a local bucket within 2×; validate and --help peak at
// ≤ 60 MiB RSS. Beside them, unbudgeted, the floor (bench/lib/cli-floor.mjs): yargs and yaml
// validating the same file with none of podmin's code, bundled and code-cached as podmin is, and
// each of the two alone; and how much podmin's validate takes above that floor.
//   node bench/cli-start.mjs [--quick] [runs]     (--quick: 5 runs)
// Each round runs every command right next to a `node -e 0` of its own (which of the two goes
// first alternates), so a machine that slows down for a while slows both sides of a pair; each
// ratio is the median over the rounds of command / its bare run. Peak RSS is getrusage's
// ru_maxrss of the process itself, read at exit by a preloaded one-line module in separate runs
// (so the timed runs load nothing extra). Prints every line, then exits 1 if any is OVER BUDGET.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { main, result, tempDir, yieldToSignals } from './lib/bench.mjs';
import { floorPrograms } from './lib/cli-floor.mjs';
import { PODMIN_BIN as bin, deployWebArgs, homeEnv } from './lib/cli.mjs';

if (!fs.existsSync(bin)) {
  console.error(`${bin} is missing; run \`npm run build\` first`);
  process.exit(2);
}
const quick = process.argv.includes('--quick');
const runs = Number(process.argv.slice(2).find((a) => a !== '--quick') ?? (quick ? 5 : 20));
if (!Number.isInteger(runs) || runs < 1) {
  console.error('usage: node bench/cli-start.mjs [--quick] [runs >= 1]');
  process.exit(2);
}
await main(async () => {
  const dir = tempDir('podmin-bench-cli-');
  const env = {
    ...process.env,
    ...homeEnv(dir),
    // A narrow terminal width would change the help text; pin it.
    COLUMNS: '100',
  };
  const rssFile = path.join(dir, 'maxrss');
  const rssPreload = path.join(dir, 'maxrss.cjs');
  fs.writeFileSync(
    rssPreload,
    `process.on("exit", () => require("node:fs").writeFileSync(${JSON.stringify(rssFile)}, String(process.resourceUsage().maxRSS)));\n`,
  );

  // Output goes to /dev/null as in the earlier runs of this benchmark, stderr to a file (both
  // cheaper for a process to write to than a pipe), which is shown when a command fails.
  const errFile = path.join(dir, 'stderr');
  const spawn = (args) => {
    const err = fs.openSync(errFile, 'w');
    let r;
    try {
      r = spawnSync(process.execPath, args, { cwd: dir, env, stdio: ['ignore', 'ignore', err] });
    } finally {
      fs.closeSync(err);
    }
    if (r.status !== 0) {
      const stderr = fs.readFileSync(errFile, 'utf8').trim();
      throw new Error(`node ${args.join(' ')} exited ${r.status}: ${stderr}`);
    }
  };
  const time = (args) => {
    const start = process.hrtime.bigint();
    spawn(args);
    return Number(process.hrtime.bigint() - start) / 1e6;
  };
  /** Peak RSS in MiB of one run of `args`. */
  const peakRss = (args) => {
    spawn(['--require', rssPreload, ...args]);
    return Number(fs.readFileSync(rssFile, 'utf8')) / 1024;
  };
  const median = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    const m = Math.floor(s.length / 2);
    return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
  };

  {
    console.log(
      `load average: ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}, ${os.cpus().length} CPUs`,
    );
    spawn([bin, 'init', 'web', '-g', 'default', '--image', 'hello:v1', '--service']);
    spawn([bin, 'connect', 'bench', '--provider', 'local', '--bucket', path.join(dir, 'bucket')]);
    // Every deploy commits a new image tag, so each one writes its Pod and the index.
    let tag = 0;
    const commands = [
      {
        name: 'podmin validate -f',
        budget: 1.2,
        rssBudget: 60,
        args: () => [bin, 'validate', '-f', 'daemonset.yaml'],
      },
      { name: 'podmin --help', budget: 1.5, rssBudget: 60, args: () => [bin, '--help'] },
      {
        name: 'podmin deploy (local bucket)',
        budget: 2,
        args: () => [bin, ...deployWebArgs(`web=hello:v${++tag}`, '-f', 'daemonset.yaml')],
      },
    ];
    // The floor (bench/lib/cli-floor.mjs): yargs and yaml with none of podmin's code, timed in
    // the same pairs, unbudgeted: what the warm validate budget is measured against.
    const floors = floorPrograms(path.join(dir, 'floor'), 'daemonset.yaml').map((f) => ({
      name: `floor, ${f.name}`,
      args: () => f.args,
    }));
    const bare = ['-e', '0'];
    // Warm up: the first run of a command writes the CLI's V8 code cache, and the page cache.
    for (let i = 0; i < Math.min(3, runs); i++) {
      for (const c of [...commands, ...floors]) (time(bare), time(c.args()));
      await yieldToSignals();
    }
    // The first run after install: no code cache in the cache directory (a fresh one each run).
    const validate = commands[0];
    const cold = { times: [], ratios: [] };
    const coldCache = path.join(dir, 'cold-cache');
    const coldRun = () => {
      fs.rmSync(coldCache, { recursive: true, force: true });
      const saved = env.XDG_CACHE_HOME;
      env.XDG_CACHE_HOME = coldCache;
      try {
        return time(validate.args());
      } finally {
        env.XDG_CACHE_HOME = saved;
      }
    };
    const bareTimes = [];
    for (const c of [...commands, ...floors]) {
      c.times = [];
      c.ratios = [];
    }
    for (let i = 0; i < runs; i++) {
      await yieldToSignals();
      // The first-run pair goes first in a round, not right after a deploy, which writes and
      // syncs its bucket files: its write-back may slow the run that follows.
      {
        let command, base;
        if (i % 2) {
          command = coldRun();
          base = time(bare);
        } else {
          base = time(bare);
          command = coldRun();
        }
        cold.times.push(command);
        bareTimes.push(base);
        cold.ratios.push(command / base);
      }
      for (const c of [...commands, ...floors]) {
        let command, base;
        if (i % 2) {
          command = time(c.args());
          base = time(bare);
        } else {
          base = time(bare);
          command = time(c.args());
        }
        c.times.push(command);
        bareTimes.push(base);
        c.ratios.push(command / base);
      }
    }
    const peaks = (args) => median([0, 1, 2].map(() => peakRss(args)));
    const bareRss = peaks(bare);
    console.log(`runs: ${runs} pairs per command`);
    console.log(
      `node -e 0: median ${median(bareTimes).toFixed(1)} ms, peak RSS ${bareRss.toFixed(1)} MiB`,
    );
    for (const c of commands) {
      const ratio = median(c.ratios);
      const over = ratio > c.budget;
      console.log(
        `${c.name}: median ${median(c.times).toFixed(1)} ms, ratio ${ratio.toFixed(2)}x (budget <= ${c.budget}x) ${over ? 'OVER BUDGET' : 'OK'}`,
      );
      result({
        figure: `${c.name}, warm code cache: ${median(c.times).toFixed(0)} ms`,
        anchor: 'node -e 0',
        ratio,
        max: c.budget,
      });
    }
    for (const f of floors) {
      console.log(
        `${f.name}: median ${median(f.times).toFixed(1)} ms, ratio ${median(f.ratios).toFixed(2)}x (unbudgeted)`,
      );
    }
    {
      // What podmin's own code adds to a warm validate over the floor, in the same rounds.
      const above = median(validate.times.map((t, k) => t - floors[0].times[k]));
      const ratio = median(floors[0].ratios);
      console.log(
        `${validate.name} above the floor: ${above.toFixed(1)} ms; the floor alone is ${ratio.toFixed(2)}x node -e 0, ` +
          `${ratio > 1.2 ? 'over' : 'within'} the warm validate budget of 1.2x`,
      );
    }
    {
      const ratio = median(cold.ratios);
      console.log(
        `${validate.name}, first run (empty cache directory): median ${median(cold.times).toFixed(1)} ms, ratio ${ratio.toFixed(2)}x (budget <= 1.5x) ${ratio > 1.5 ? 'OVER BUDGET' : 'OK'}`,
      );
      result({
        figure: `${validate.name}, first run after install: ${median(cold.times).toFixed(0)} ms`,
        anchor: 'node -e 0',
        ratio,
        max: 1.5,
      });
    }
    for (const c of commands) {
      await yieldToSignals();
      const rss = peaks(c.args());
      // Deploy's memory is printed for reference; the budget is on the start path.
      const line = `${c.name} peak RSS: ${rss.toFixed(1)} MiB`;
      if (c.rssBudget === undefined) {
        console.log(`${line} (unbudgeted)`);
      } else {
        const over = rss > c.rssBudget;
        console.log(`${line} (budget <= ${c.rssBudget} MiB) ${over ? 'OVER BUDGET' : 'OK'}`);
        result({
          figure: `${c.name} peak RSS: ${rss.toFixed(1)} MiB`,
          anchor: `${c.rssBudget} MiB`,
          ratio: rss / c.rssBudget,
          max: 1,
        });
      }
    }
  }
});
