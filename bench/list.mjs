#!/usr/bin/env node
// Budget (issue 18, DESIGN §8): `podmin list` over 10,000 index entries within 2 s warm against
// the S3 emulator and, cold, within 1.25× the same objects read bare through the same proxy with
// the CLI's 16 reads in flight (the emulator's own pace; the 10 s target is printed beside it),
// and `podmin deploy` into that index within 1.5× its time at 100
// entries; measured on the local provider and on the S3 emulator at 100, 1,000 and 10,000
// entries, with the object-store requests of every run.
//   node bench/list.mjs [--quick] [--apps=N] [--runs=N]
// The fleet: `apps` DaemonSets each deployed to every NodeGroup, as many NodeGroups as the size
// needs, so every entry has its own payload path and the index holds `apps` distinct Pod
// payloads. By default every entry has a payload of its own (`apps` = the size: 10,000 distinct
// objects at 10,000 entries), so the cold list reads every object the index names; `--apps=100`
// shares 100 payloads among the entries (100 × 100 at 10,000), which the CLI reads once each.
// Cold: the CLI's payload cache and list summaries removed before the run; warm: right after a
// cold run.
// --quick: 10 and 100 entries, 5 apps, one run each, no budgets (the integration test).
// Exits 1 when a budget is missed, 2 when a run fails.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bundleLibraries } from './lib/bundle-libraries.mjs';
import { main, result, startEmulator, tempDir } from './lib/bench.mjs';
import { PODMIN_BIN as bin, emulatorEnv, homeEnv, runPodmin } from './lib/cli.mjs';
import { startRecordingProxy } from './lib/recording-proxy.mjs';

const root = path.resolve(import.meta.dirname, '..');
const option = (name, fallback) => {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? Number(hit.split('=')[1]) : fallback;
};
const quick = process.argv.includes('--quick');
const sizes = quick ? [10, 100] : [100, 1000, 10000];
// Undefined: one distinct payload per entry.
const apps = option('apps', quick ? 5 : undefined);
const runs = option('runs', quick ? 1 : 3);
if (!fs.existsSync(bin)) {
  console.error(`${bin} is missing; run npx nx run cli:build first`);
  process.exit(2);
}
if (
  (apps !== undefined && (!Number.isInteger(apps) || apps < 1)) ||
  !Number.isInteger(runs) ||
  runs < 1
) {
  console.error('usage: node bench/list.mjs [--quick] [--apps=N>=1] [--runs=N>=1]');
  process.exit(2);
}

// The bench seeds the emulator itself, with the credentials the CLI gets below.
process.env.AWS_ACCESS_KEY_ID ??= 'testing';
process.env.AWS_SECRET_ACCESS_KEY ??= 'testing';
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
// On a shared machine every time moves with the load; compare the lines of one run.
console.log(
  `load average: ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}, ${os.cpus().length} CPUs`,
);
await main(async () => {
  const state = tempDir('podmin-bench-list-');
  const lib = await bundleLibraries(path.join(state, 'libs.cjs'), [
    "export { buildDeployment } from '@podmin/util-manifest';",
    "export { INDEX_KEY, podPayloadKey, serializeIndex } from '@podmin/util-desired-state';",
    "export { LocalDirectoryObjectStore, S3ObjectStore, createS3Client } from '@podmin/data-access-object-store';",
  ]);

  /** The bench's own bucket handle: a directory, or S3 at the location's endpoint. */
  const openStore = (location) =>
    location.provider === 'local'
      ? new lib.LocalDirectoryObjectStore(location.bucket)
      : new lib.S3ObjectStore({
          client: lib.createS3Client({
            region: location.region,
            ...(location.endpoint ? { endpoint: location.endpoint } : {}),
          }),
          bucket: location.bucket,
        });

  const upstream =
    process.env.PODMIN_TEST_AWS_ENDPOINT || startEmulator(root, path.join(state, 'emulator'));

  // Every S3 request of the CLI passes this counting proxy on loopback (as deploy-requests.mjs).
  const proxy = await startRecordingProxy(upstream);

  // The local provider has no requests: a preloaded module counts the CLI's opens of object
  // files in the bucket directory (reads, and writes of temporary files), written at exit.
  const countFile = path.join(state, 'local-count.json');
  const countPreload = path.join(state, 'count-opens.cjs');
  fs.writeFileSync(
    countPreload,
    `const fsp = require('node:fs/promises');
const bucket = process.env.PODMIN_BENCH_BUCKET + '/';
const counts = { GET: 0, PUT: 0 };
const open = fsp.open;
fsp.open = function (file, flags, ...rest) {
  // A read opens the object's file; a write creates a temporary file renamed into place.
  if (typeof file === 'string' && file.startsWith(bucket) && !file.includes('/.podmin-locks')) {
    if (flags === undefined || flags === 'r') {
      if (!file.includes('/.podmin-tmp-')) counts.GET++;
    } else if (file.includes('/.podmin-tmp-')) counts.PUT++;
  }
  return open.call(this, file, flags, ...rest);
};
process.on('exit', () => {
  const { user, system } = process.cpuUsage();
  require('node:fs').writeFileSync(process.env.PODMIN_BENCH_COUNT_FILE, JSON.stringify({ counts, cpuMs: (user + system) / 1000 }));
});
`,
  );

  const providers = [
    {
      name: 'local',
      bucket: path.join(state, 'bucket'),
      connect: (bucket) => ['--provider', 'local', '--bucket', bucket],
      location: (bucket) => ({ provider: 'local', bucket, region: 'us-east-1' }),
    },
    {
      name: 's3 emulator',
      bucket: `podmin-bench-list-${process.pid}`,
      connect: (bucket) => ['--provider', 'aws', '--region', 'us-east-1', '--bucket', bucket],
      location: (bucket) => ({ provider: 'aws', bucket, region: 'us-east-1', endpoint: upstream }),
    },
  ];

  const daemonSet = (name, nodegroup) => `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: ${name}
  namespace: fleet
  annotations:
    example.com/team: bench
spec:
  selector:
    matchLabels:
      app: ${name}
  template:
    metadata:
      labels:
        app: ${name}
    spec:
      nodeSelector:
        podmin.dev/nodegroup: ${nodegroup}
      containers:
        - name: ${name}
          image: hello:v1
          args: ["--listen", ":8080", "--name", "${name}"]
          resources:
            limits:
              memory: 128Mi
`;
  const appName = (i) => `app-${String(i).padStart(5, '0')}`;
  const groupName = (i) => `ng-${String(i).padStart(3, '0')}`;
  const pods = new Map();
  const podOf = (app) => {
    if (!pods.has(app)) {
      const d = lib.buildDeployment(daemonSet(app, groupName(0)), {
        source: `${app}.yaml`,
        name: app,
        nodegroup: groupName(0),
      });
      pods.set(app, d.podYaml);
    }
    return pods.get(app);
  };

  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const fmtCount = (counts) =>
    Object.entries(counts)
      .filter(([, n]) => n > 0)
      .map(([m, n]) => `${n} ${m}`)
      .join(', ') || 'none';

  async function runCli(provider, env, args) {
    proxy.take();
    fs.rmSync(countFile, { force: true });
    const { ms, stderr } = await runPodmin(args, {
      cwd: state,
      env: { ...env, PODMIN_BENCH_COUNT_FILE: countFile },
      nodeArgs: ['--require', countPreload],
    });
    const recorded = JSON.parse(fs.readFileSync(countFile, 'utf8'));
    let counts;
    if (provider.name === 'local') {
      counts = recorded.counts;
    } else {
      counts = {};
      for (const { method } of proxy.take()) counts[method] = (counts[method] ?? 0) + 1;
    }
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    return { ms, cpuMs: recorded.cpuMs, counts, total, stderr };
  }

  /**
   * The emulator's floor for a cold list: the same objects read by this process through the same
   * proxy, with the CLI's payload reads in flight, and nothing else (no verifying, no parsing).
   */
  const CLI_READS_IN_FLIGHT = 16;
  async function bareReads(provider, keys) {
    const store = openStore({ ...provider.location(provider.bucket), endpoint: proxy.endpoint });
    proxy.take();
    const pending = [...keys];
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CLI_READS_IN_FLIGHT }, async () => {
        for (let key = pending.pop(); key !== undefined; key = pending.pop()) await store.get(key);
      }),
    );
    const ms = performance.now() - started;
    const counts = {};
    for (const { method } of proxy.take()) counts[method] = (counts[method] ?? 0) + 1;
    return { ms, counts, total: keys.length };
  }

  const results = [];
  {
    for (const provider of providers) {
      const home = path.join(state, provider.name.replace(/\W/g, '-'));
      const env = {
        ...process.env,
        ...homeEnv(home),
        ...emulatorEnv(proxy.endpoint),
        // An unsigned deploy reads the trust list (§6.41) from Parameter Store: the emulator,
        // past the proxy, so the counted requests stay the object store's.
        AWS_ENDPOINT_URL_SSM: upstream,
        PODMIN_BENCH_BUCKET: provider.bucket,
      };
      // A cold list has neither the payload cache nor the list's summaries of payloads.
      const coldCaches = ['payloads', 'list'].map((d) => path.join(home, 'k', 'podmin', d));
      await runCli(provider, env, ['connect', 'bench', ...provider.connect(provider.bucket)]);
      const store = openStore(provider.location(provider.bucket));
      const seeded = new Set();
      let deploys = 0;
      for (const size of sizes) {
        // Seed: every payload object the index names (create-only writes, as deploy makes them),
        // then the index in one write.
        const seedStart = Date.now();
        const index = {};
        const perApp = Math.min(apps ?? size, size);
        const todo = [];
        for (let e = 0; e < size; e++) {
          const app = appName(e % perApp);
          const group = groupName(Math.floor(e / perApp));
          const body = podOf(app);
          const key = lib.podPayloadKey(group, body);
          index[`${group}/${app}`] = { pod: key };
          if (!seeded.has(key)) todo.push([key, body]);
        }
        const pending = [...todo];
        await Promise.all(
          Array.from({ length: 32 }, async () => {
            for (let next = pending.pop(); next; next = pending.pop()) {
              await store.put(next[0], next[1]);
              seeded.add(next[0]);
            }
          }),
        );
        const indexText = lib.serializeIndex(index);
        await store.put(lib.INDEX_KEY, indexText);
        console.log(
          `seeded ${provider.name}, ${size} entries: ${perApp} distinct Pod payloads, ${todo.length} objects written, index ${(indexText.length / 1024).toFixed(0)} KiB, ${Date.now() - seedStart} ms`,
        );
        // Warm the CLI's own code cache, then measure.
        await runCli(provider, env, ['list', '-o', 'json']);
        if (provider.name === 's3 emulator') {
          // One read per distinct payload digest, as the CLI makes them (keys sharing a digest
          // share a read).
          const byDigest = new Map(Object.values(index).map((e) => [path.basename(e.pod), e.pod]));
          const floor = await bareReads(provider, [lib.INDEX_KEY, ...byDigest.values()]);
          results.push({
            provider: provider.name,
            size,
            what: 'bare GETs',
            ms: floor.ms,
            last: floor,
            distinct: perApp,
          });
          console.log(
            `bare GETs (${provider.name}, ${size} entries): ${floor.total} objects in ${floor.ms.toFixed(0)} ms, ${CLI_READS_IN_FLIGHT} in flight, through the same proxy (the emulator's floor for a cold list)`,
          );
        }
        const cold = [];
        const warm = [];
        for (let r = 0; r < runs; r++) {
          for (const d of coldCaches) fs.rmSync(d, { recursive: true, force: true });
          cold.push(await runCli(provider, env, ['list', '-o', 'json']));
          warm.push(await runCli(provider, env, ['list', '-o', 'json']));
        }
        // `--output json` writes nothing but errors to stderr.
        for (const run of [...cold, ...warm]) {
          if (run.stderr !== '')
            throw new Error(`podmin list -o json wrote to stderr: ${run.stderr}`);
        }
        const deploy = [];
        for (let r = 0; r < runs; r++) {
          const name = `bench-deploy-${++deploys}`;
          const file = path.join(state, `${name}.yaml`);
          fs.writeFileSync(file, daemonSet(name, groupName(0)));
          deploy.push(
            await runCli(provider, env, [
              'deploy',
              '--no-preflight',
              '--no-pin',
              name,
              '-g',
              groupName(0),
              '-f',
              file,
            ]),
          );
        }
        for (const [what, list] of [
          ['list cold', cold],
          ['list warm', warm],
          ['deploy', deploy],
        ]) {
          const ms = median(list.map((x) => x.ms));
          const cpuMs = median(list.map((x) => x.cpuMs));
          const last = list.at(-1);
          results.push({ provider: provider.name, size, what, ms, last, distinct: perApp });
          // CPU time is the process's own (user + system): under load it moves less than wall time.
          console.log(
            `${what} (${provider.name}, ${size} entries): median ${ms.toFixed(0)} ms of ${list.length} (CPU ${cpuMs.toFixed(0)} ms), ${last.total} requests (${fmtCount(last.counts)})`,
          );
        }
      }
    }
  }

  if (quick) {
    console.log('quick run: budgets apply at 10,000 entries and are not checked');
  } else {
    const find = (provider, size, what) =>
      results.find((r) => r.provider === provider && r.size === size && r.what === what);
    const at = (provider, size, what) => find(provider, size, what)?.ms;
    const budget = (text, value, limit, unit, anchor = 'the same deploy at 100 entries') => {
      const ok = value <= limit;
      console.log(
        `${text}: ${value.toFixed(unit === 'x' ? 2 : 0)}${unit === 'x' ? 'x' : ' ms'} (budget <= ${limit}${unit === 'x' ? 'x' : ' ms'}) ${ok ? 'OK' : 'OVER BUDGET'}`,
      );
      result(
        unit === 'x'
          ? { figure: text, anchor, ratio: value, max: limit }
          : {
              figure: `${text}: ${value.toFixed(0)} ms`,
              anchor: `${limit} ms`,
              ratio: value / limit,
              max: 1,
            },
      );
    };
    // The cold line must have read the index and every distinct payload it names.
    const cold = find('s3 emulator', 10000, 'list cold');
    const reads = cold.last.counts.GET ?? 0;
    console.log(
      `list cold, 10,000 entries, s3 emulator: ${reads} GETs of ${cold.distinct + 1} objects (the index and ${cold.distinct} payloads)`,
    );
    result({
      figure: `list cold, 10,000 entries, objects read: ${reads}`,
      anchor: `${cold.distinct + 1} objects`,
      ratio: reads / (cold.distinct + 1),
      min: 1,
    });
    budget(
      'list warm, 10,000 entries, s3 emulator',
      at('s3 emulator', 10000, 'list warm'),
      2000,
      'ms',
    );
    // Cold on the emulator: every payload is one GET the emulator answers at its own pace, so the
    // list is judged against the same reads made bare (DESIGN §8); 10 s is printed beside it.
    const coldMs = at('s3 emulator', 10000, 'list cold');
    const floorMs = at('s3 emulator', 10000, 'bare GETs');
    console.log(
      `list cold, 10,000 entries, s3 emulator: ${coldMs.toFixed(0)} ms, ${(coldMs / 10000).toFixed(2)}x the 10 s target; the same reads bare took ${floorMs.toFixed(0)} ms (${((reads / floorMs) * 1000).toFixed(0)} GET/s)`,
    );
    budget(
      'list cold / bare GETs of its objects, 10,000 entries, s3 emulator',
      coldMs / floorMs,
      1.25,
      'x',
      `the same ${reads} GETs made bare`,
    );
    for (const provider of ['local', 's3 emulator'])
      budget(
        `deploy at 10,000 / at 100 entries, ${provider}`,
        at(provider, 10000, 'deploy') / at(provider, 100, 'deploy'),
        1.5,
        'x',
      );
    console.log(
      `unbudgeted: list warm, 10,000 entries, local ${at('local', 10000, 'list warm').toFixed(0)} ms; list cold ${at('local', 10000, 'list cold').toFixed(0)} ms`,
    );
  }
});
