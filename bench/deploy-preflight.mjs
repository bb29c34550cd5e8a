#!/usr/bin/env node
// Budget (DESIGN §6.17): deploy's preflight adds at most one round of parallel requests, and
// at most two requests per image, one per secret and one for the infrastructure inputs.
// Runs the real CLI: `deploy` of a manifest with a published two-platform image, a secret
// annotation and a Service, alternating two image tags so every deploy changes the entry, with
// and without the preflight (`--no-preflight`), on the S3 emulator and on the local provider.
// S3: every request (S3 and SSM) goes through a counting proxy on loopback that holds each
// response back by a fixed latency, standing in for a real region's round trip, so rounds
// (the longest chain of requests each starting after the one before ended) and wall time are
// both measurable. Wall time is printed for both providers (local: a directory bucket).
//   node bench/deploy-preflight.mjs [runs] [latency-ms]
//     (needs PODMIN_TEST_AWS_ENDPOINT, or starts the emulator; build first: npm run build)
// Exits 1 when a budget is missed, 2 when a command fails; cleans up on SIGINT/SIGTERM/SIGHUP.
import fs from 'node:fs';
import path from 'node:path';
import { cleanup, result, startEmulator, tempDir } from './lib/bench.mjs';
import { PODMIN_BIN as bin, emulatorEnv, homeEnv, runPodmin } from './lib/cli.mjs';
import { startRecordingProxy } from './lib/recording-proxy.mjs';

const root = path.resolve(import.meta.dirname, '..');
const fixture = path.join(root, 'libs/cli/feature-image/src/__fixtures__/hello-app');
const runs = Number(process.argv[2] ?? 7);
const latencyMs = Number(process.argv[3] ?? 20);
const state = tempDir('podmin-bench-preflight-');
const hostArch = process.arch === 'x64' ? 'amd64' : process.arch;
// Unique per run: the emulator's secret store is shared by every run against it.
const cluster = `bench${process.pid}`;

let upstream = process.env.PODMIN_TEST_AWS_ENDPOINT;

try {
  if (!fs.existsSync(bin)) throw new Error(`${bin} is missing: run npm run build first`);
  upstream ||= startEmulator(root, path.join(state, 'emulator'));
  /** Every request of the CLI, what it asked for and when it started and ended. */
  const proxy = await startRecordingProxy(upstream, { latencyMs });

  const sandbox = (name, extra = {}) => {
    const home = path.join(state, name);
    fs.mkdirSync(home, { recursive: true });
    return {
      home,
      env: {
        PATH: process.env.PATH,
        ...homeEnv(home),
        XDG_RUNTIME_DIR: path.join(home, 'r'),
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        ...extra,
      },
    };
  };
  const podmin = (box, args, input) => runPodmin(args, { cwd: box.home, env: box.env, input });

  const manifest = (tag, secret = true) => `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: web
spec:
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
${secret ? '      annotations:\n        podmin.dev/aws-parameter-store: greeting\n' : ''}    spec:
      nodeSelector:
        podmin.dev/nodegroup: default
      containers:
        - name: web
          image: hello:${tag}
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector:
    app: web
  ports:
    - port: 80
`;

  /** The longest chain of requests in which each starts after the previous one ended. */
  const rounds = (list) => {
    const sorted = [...list].sort((a, b) => a.start - b.start);
    const depth = [];
    sorted.forEach((r, i) => {
      let best = 0;
      for (let j = 0; j < i; j++) if (sorted[j].end <= r.start) best = Math.max(best, depth[j]);
      depth[i] = best + 1;
    });
    return Math.max(0, ...depth);
  };
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

  /** Prepares a provider: connect, two pushed tags of a two-platform image, the secret. */
  const prepare = async (box, connectArgs) => {
    await podmin(box, ['connect', cluster, ...connectArgs]);
    for (const tag of ['v1', 'v2']) {
      await podmin(box, [
        'build',
        fixture,
        '-t',
        `hello:${tag}`,
        '--platform',
        'linux/amd64,linux/arm64',
      ]);
      await podmin(box, ['push', `hello:${tag}`]);
      fs.writeFileSync(path.join(box.home, `${tag}.yaml`), manifest(tag));
      fs.writeFileSync(path.join(box.home, `${tag}-plain.yaml`), manifest(tag, false));
    }
    await podmin(box, ['secret', 'create', 'greeting', '--for', 'web', '--from-stdin'], 'hi');
  };

  /** Alternating runs with and without the preflight; each deploy changes the image tag. */
  const measure = async (box, suffix = '') => {
    const out = { with: [], without: [] };
    let n = 0;
    for (let i = 0; i < runs; i++) {
      for (const mode of i % 2 === 0 ? ['with', 'without'] : ['without', 'with']) {
        const tag = n++ % 2 === 0 ? 'v1' : 'v2';
        const args = ['deploy', 'web', '-g', 'default', '-f', `${tag}${suffix}.yaml`];
        if (mode === 'without') args.push('--no-preflight');
        proxy.take();
        const { ms, stderr } = await podmin(box, args);
        if (/Preflight/.test(stderr)) throw new Error(`unexpected preflight warning: ${stderr}`);
        out[mode].push({ ms, requests: proxy.take() });
      }
    }
    return out;
  };

  // S3 emulator, through the proxy; the NodeGroup's architecture in the module inputs.
  const bucket = `podmin-bench-preflight-${process.pid}`;
  const s3 = sandbox('s3', emulatorEnv(proxy.endpoint, { allServices: true }));
  await prepare(s3, ['--provider', 'aws', '--region', 'us-east-1', '--bucket', bucket]);
  const { S3Client, PutObjectCommand } = await import('@aws-sdk/client-s3');
  const client = new S3Client({
    endpoint: upstream,
    region: 'us-east-1',
    credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
    forcePathStyle: true,
  });
  await client.send(
    new PutObjectCommand({
      Bucket: bucket,
      Key: 'tfstate/podmin.auto.tfvars.json',
      Body: JSON.stringify({
        cluster,
        region: 'us-east-1',
        bucket,
        nodegroups: { default: { arch: hostArch, instance_type: 't4g.small' } },
      }),
    }),
  );
  // Both tags' payloads exist before measuring, so every measured deploy writes the same objects
  // (an index entry and a history record) with or without the preflight.
  for (const tag of ['v1', 'v2'])
    await podmin(s3, ['deploy', 'web', '-g', 'default', '-f', `${tag}.yaml`]);
  const s3Runs = await measure(s3);

  // Local provider: the same manifests, a directory bucket, this machine's architecture.
  const local = sandbox('local');
  await prepare(local, ['--provider', 'local']);
  for (const tag of ['v1', 'v2']) {
    for (const suffix of ['', '-plain'])
      await podmin(local, ['deploy', 'web', '-g', 'default', '-f', `${tag}${suffix}.yaml`]);
  }
  const localRuns = await measure(local, '-plain');
  const localSecretRuns = await measure(local);

  const summary = (list) => ({
    ms: median(list.map((r) => r.ms)),
    requests: median(list.map((r) => r.requests.length)),
    rounds: median(list.map((r) => rounds(r.requests))),
    last: list.at(-1).requests.map((r) => r.what),
  });
  const s3With = summary(s3Runs.with);
  const s3Without = summary(s3Runs.without);
  const localWith = median(localRuns.with.map((r) => r.ms));
  const localWithout = median(localRuns.without.map((r) => r.ms));
  const localSecretWith = median(localSecretRuns.with.map((r) => r.ms));
  const localSecretWithout = median(localSecretRuns.without.map((r) => r.ms));

  console.log(
    `deploy-preflight, s3 emulator (${latencyMs} ms per request), median of ${runs} runs each:`,
  );
  for (const [name, s] of [
    ['without preflight', s3Without],
    ['with preflight', s3With],
  ]) {
    console.log(
      `  ${name}: ${s.ms.toFixed(0)} ms, ${s.requests} requests in ${s.rounds} rounds (${s.last.join(', ')})`,
    );
  }
  console.log(
    `deploy-preflight, local provider, median of ${runs} runs each: without ${localWithout.toFixed(0)} ms, with ${localWith.toFixed(0)} ms (×${(localWith / localWithout).toFixed(2)}); with a secret annotation: without ${localSecretWithout.toFixed(0)} ms, with ${localSecretWith.toFixed(0)} ms (+${(localSecretWith - localSecretWithout).toFixed(0)} ms: the secret-store library, which carries the AWS SDK clients, loaded to ask the local store; not budgeted)`,
  );

  const addedRounds = s3With.rounds - s3Without.rounds;
  const addedRequests = s3With.requests - s3Without.requests;
  const addedMs = s3With.ms - s3Without.ms;
  // One image (its index.json and its image index), one secret, the infrastructure inputs.
  const requestBudget = 2 + 1 + 1;
  // Wall time is printed, not budgeted: beyond the added round it is the one-time load of the
  // libraries the checks use (the secret store's AWS SDK client, the infrastructure inputs'
  // parser), which depends on the machine and its load more than on podmin.
  console.log(
    `deploy-preflight wall time added: s3 emulator ${addedMs.toFixed(0)} ms (one round is ${latencyMs} ms), local provider ${(localWith - localWithout).toFixed(0)} ms (×${(localWith / localWithout).toFixed(2)}) without a secret annotation, ${(localSecretWith - localSecretWithout).toFixed(0)} ms with one`,
  );
  const lines = [
    [`deploy-preflight rounds added (s3 emulator): ${addedRounds} (budget ≤ 1)`, addedRounds <= 1],
    [
      `deploy-preflight requests added (s3 emulator): ${addedRequests} (budget ≤ ${requestBudget}: an image's index.json and image index, a secret, the infrastructure inputs)`,
      addedRequests <= requestBudget,
    ],
  ];
  for (const [line, ok] of lines) console.log(`${line} ${ok ? 'OK' : 'OVER BUDGET'}`);
  result({
    figure: `rounds of requests the preflight adds: ${addedRounds}`,
    anchor: '1 round',
    ratio: addedRounds,
    max: 1,
  });
  result({
    figure: `requests the preflight adds: ${addedRequests}`,
    anchor: `${requestBudget} requests`,
    ratio: addedRequests / requestBudget,
    max: 1,
  });
  await cleanup();
  process.exit(lines.every(([, ok]) => ok) ? 0 : 1);
} catch (err) {
  console.error(err instanceof Error ? err.message : err);
  await cleanup();
  process.exit(2);
}
