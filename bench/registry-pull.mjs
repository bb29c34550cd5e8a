#!/usr/bin/env node
// Budget (DESIGN.md §8): pulling a blob through the node registry runs at ≥ 0.9× the lesser of
// (a) a direct read of the same object through the same adapter plus SHA-256 over it and (b) a
// bare Node.js HTTP server streaming it to the same client, and the registry's RSS grows by
// ≤ 32 MiB while serving a 1 GiB blob. The registry starts with the V8 flags and environment the
// supervisor gives it (serviceExecArgv and serviceEnv of @podmin/agent-feature-supervisor, its
// `fast` memory profile), as on a node.
//
// For each provider the "direct object read" goes through the very adapter the registry reads
// with (openBucketStore from @podmin/agent-data-access-node, as the registry opens it, bundled here with esbuild),
// and the pull is a GET /v2/<repo>/blobs/<digest> by curl, a native client like containerd.
// Rounds are interleaved (order rotated each round) and each line prints the median and the
// min–max spread, so every ratio compares numbers taken in the same run.
//   local: a random blob in a local-directory bucket, the registry with --provider local;
//          reference lines: the direct read plus sha256 (the registry verifies while it sends),
//          a bare Node.js HTTP server and Python's http.server with sendfile(2), both serving
//          the same file to curl: the ceiling of an HTTP server on this machine.
//   s3:    a smaller random blob in a bucket on the AWS-API emulator (PODMIN_TEST_AWS_ENDPOINT,
//          started and stopped here when unset), the registry with --provider aws; the bare
//          server streams the object from the emulator (one plain GET) to curl.
// Exits 1 when a budget is missed, 2 when the run fails.
//   node bench/registry-pull.mjs [--quick] [MiB=1024] [rounds=5] [s3MiB=256]
//   (--quick: 256 MiB, 2 rounds, 16 MiB: below a few hundred MiB, starting curl, a few ms that
//   the in-process anchor does not pay, weighs over a tenth of a local pull)
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { curlGet, directRead, writeRandomBlob } from './lib/blob-transfer.mjs';
import { bundleLibraries } from './lib/bundle-libraries.mjs';
import { killAtCleanup, main, result, startEmulator, tempDir } from './lib/bench.mjs';

const root = path.resolve(import.meta.dirname, '..');
const bin = path.join(root, 'dist/bin/agent-registry.cjs');
if (!fs.existsSync(bin)) {
  console.error(`${bin} is missing; run \`npm run build\` first`);
  process.exit(2);
}
const quick = process.argv.includes('--quick');
const numbers = process.argv.slice(2).filter((a) => a !== '--quick');
const mib = Number(numbers[0] ?? (quick ? 256 : 1024));
const rounds = Number(numbers[1] ?? (quick ? 2 : 5));
const s3Mib = Number(numbers[2] ?? (quick ? 16 : 256));
if (![mib, rounds, s3Mib].every((n) => Number.isInteger(n) && n >= 1)) {
  console.error('usage: node bench/registry-pull.mjs [--quick] [MiB] [rounds] [s3MiB]');
  process.exit(2);
}
await main(async () => {
  const dir = tempDir('podmin-bench-registry-');
  const repo = 'apps/bench/blob';

  // The registry's own bucket adapters, so the direct read is the registry's read minus HTTP.
  const adaptersFile = path.join(dir, 'adapters.cjs');
  const adapters = await bundleLibraries(adaptersFile, [
    "export { AGENT_PROVIDERS, openBucketStore } from '@podmin/agent-data-access-node';",
    "export { parseAgentProcessConfig } from '@podmin/agent-util-config';",
    "export { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';",
    "export { serviceExecArgv, serviceEnv } from '@podmin/agent-feature-supervisor';",
  ]);
  // The registry's profile as the supervisor runs it (libs/agent/feature-supervisor/src/agent.ts).
  const REGISTRY_PROFILE = { memory: 'fast', env: {} };

  /** The agent's six flags around the provider, bucket and region ones given. */
  const agentArgs = (flags) => [
    ...flags,
    '--cluster',
    'bench',
    '--nodegroup',
    'default',
    '--ipv6-prefix',
    '2600:1f14:abc:1200:1::/80',
  ];

  /** The bucket store the registry process opens for these flags. */
  const bucketStore = (flags, env) =>
    adapters.openBucketStore(
      adapters.parseAgentProcessConfig(
        agentArgs(flags),
        { ...env, PODMIN_NODE_ROOT: path.join(dir, 'node') },
        adapters.AGENT_PROVIDERS,
      ),
      env,
    );

  /** Starts the registry binary on an ephemeral loopback port; resolves to { child, port }. */
  async function startRegistry(args, env = process.env) {
    const child = spawn(
      process.execPath,
      [...adapters.serviceExecArgv(REGISTRY_PROFILE), bin, ...agentArgs(args)],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
        env: {
          ...adapters.serviceEnv(REGISTRY_PROFILE, env),
          PODMIN_NODE_ROOT: path.join(dir, 'node'),
          PODMIN_AGENT_REGISTRY_LISTEN: '127.0.0.1:0',
        },
      },
    );
    killAtCleanup(child);
    const port = await new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error('registry did not start within 20 s')),
        20_000,
      );
      child.once('exit', (code) => reject(new Error(`registry exited with ${code}`)));
      createInterface({ input: child.stderr }).on('line', (line) => {
        try {
          const event = JSON.parse(line);
          if (event.msg === 'listen') {
            clearTimeout(timer);
            resolve(event.port);
          }
        } catch {
          // not JSON
        }
      });
    });
    return { child, port };
  }

  /** Starts a reference server that prints its port on stdout's first line. */
  async function startServer(command, args) {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'ignore'] });
    killAtCleanup(child);
    return new Promise((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`${command} exited with ${code}`)));
      createInterface({ input: child.stdout }).once('line', (l) => resolve(Number(l)));
    });
  }

  /** Runs each measurement `rounds` times, interleaved, rotating the order every round. */
  async function interleave(measurements) {
    const results = Object.fromEntries(Object.keys(measurements).map((k) => [k, []]));
    const names = Object.keys(measurements);
    for (let round = 0; round < rounds; round++) {
      for (let i = 0; i < names.length; i++) {
        const name = names[(i + round) % names.length];
        results[name].push(await measurements[name]());
      }
    }
    return results;
  }

  const rate = (r) => r.bytes / 1024 / 1024 / (r.ms / 1000);
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  /** Median MiB/s of a result list, and a printable "median (min–max) MiB/s". */
  function summary(results) {
    const rates = results.map(rate);
    const text = `${median(rates).toFixed(0)} MiB/s (${Math.min(...rates).toFixed(0)}–${Math.max(...rates).toFixed(0)})`;
    return { median: median(rates), text };
  }
  const line = (label, text) => console.log(`  ${label.padEnd(44)} ${text}`);
  /** The budget: the pull against the lesser of its two anchors (DESIGN §8). */
  function budget(provider, pull, anchors) {
    const [anchor, value] = Object.entries(anchors).sort((a, b) => a[1] - b[1])[0];
    const ratio = pull / value;
    line(
      'ratio pull / lesser anchor',
      `${ratio.toFixed(2)} = registry / ${anchor} (budget ≥ 0.90) ${ratio >= 0.9 ? 'OK' : 'OVER BUDGET'}`,
    );
    result({
      figure: `registry blob pull, ${provider}: ${pull.toFixed(0)} MiB/s`,
      anchor: `${anchor} ${value.toFixed(0)} MiB/s`,
      ratio,
      min: 0.9,
    });
  }
  /**
   * The lines every provider prints: the direct read, the pull and the two anchors (`labels`
   * names the provider's direct read and bare server), the budget, and pull / direct read.
   */
  function report(provider, s, labels) {
    line(labels.direct, s.direct.text);
    line('registry blob pull, curl (verifies sha256)', s.registry.text);
    line('anchor: direct read + sha256', s.directSha256.text);
    line(labels.bare, s.bare.text);
    budget(provider, s.registry.median, {
      'direct read + sha256': s.directSha256.median,
      'bare Node.js server': s.bare.median,
    });
    line('ratio pull / direct read', (s.registry.median / s.direct.median).toFixed(2));
  }

  async function localProvider() {
    const size = mib * 1024 * 1024;
    const bucket = path.join(dir, 'bucket');
    const temp = path.join(dir, 'blob.tmp');
    const hex = writeRandomBlob(temp, size);
    const key = `${repo}/blobs/sha256/${hex}`;
    const objectFile = path.join(bucket, ...key.split('/'));
    fs.mkdirSync(path.dirname(objectFile), { recursive: true });
    fs.renameSync(temp, objectFile);

    const flags = ['--provider', 'local', '--bucket', bucket, '--region', 'local'];
    const store = bucketStore(flags, {});
    const registry = await startRegistry(flags);
    const barePort = await startServer(process.execPath, [
      '-e',
      `const http=require('http'),fs=require('fs');const f=process.argv[1];const s=http.createServer((q,r)=>{r.writeHead(200,{'content-length':fs.statSync(f).size});fs.createReadStream(f,{highWaterMark:1048576}).pipe(r)});s.listen(0,'127.0.0.1',()=>console.log(s.address().port))`,
      objectFile,
    ]);
    const python =
      spawnSync('python3', ['-c', 'import http.server'], { stdio: 'ignore' }).status === 0;
    const pythonPort = python
      ? await startServer('python3', [
          '-u',
          '-c',
          // http.server's SimpleHTTPRequestHandler with the body sent by socket.sendfile (zero-copy).
          `import http.server,os,sys
f=sys.argv[1]
class H(http.server.BaseHTTPRequestHandler):
  protocol_version='HTTP/1.1'
  def do_GET(self):
    self.send_response(200);self.send_header('Content-Length',str(os.path.getsize(f)));self.end_headers()
    with open(f,'rb') as b: self.connection.sendfile(b)
  def log_message(self,*a): pass
s=http.server.ThreadingHTTPServer(('127.0.0.1',0),H);print(s.server_address[1]);s.serve_forever()`,
          objectFile,
        ])
      : undefined;

    const rssKiB = () => {
      const status = fs.readFileSync(`/proc/${registry.child.pid}/status`, 'utf8');
      return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
    };
    const blobUrl = (port) => `http://127.0.0.1:${port}/v2/${repo}/blobs/sha256:${hex}`;
    await directRead(store, key, size); // warm the page cache so every reader reads from memory
    const before = rssKiB();
    let peak = before;
    let sampler;
    const measurements = {
      direct: () => directRead(store, key, size),
      directSha256: () => directRead(store, key, size, true),
      registry: async () => {
        sampler = setInterval(() => (peak = Math.max(peak, rssKiB())), 20);
        try {
          return await curlGet(blobUrl(registry.port), size);
        } finally {
          clearInterval(sampler);
        }
      },
      bare: () => curlGet(`http://127.0.0.1:${barePort}/`, size),
    };
    if (pythonPort !== undefined) {
      measurements.python = () => curlGet(`http://127.0.0.1:${pythonPort}/`, size);
    }
    // Warm both servers outside the timed rounds, as on S3 below: a new registry's first pull
    // also starts its hashing thread, allocates its buffers and compiles its data path (it ran
    // at a third of the later pulls' rate, which weighed half of a two-round --quick median).
    // Its RSS is sampled from before this first pull, so the growth budget still covers it.
    await measurements.registry();
    await measurements.bare();
    const results = await interleave(measurements);
    await new Promise((r) => setTimeout(r, 100));
    const after = rssKiB();
    const growth = (Math.max(peak, after) - before) / 1024;

    const s = Object.fromEntries(Object.entries(results).map(([k, v]) => [k, summary(v)]));
    console.log(
      `local provider: ${mib} MiB blob (sha256:${hex.slice(0, 12)}…), ${rounds} rounds, median (min–max)`,
    );
    report('local', s, {
      direct: 'direct object read (LocalDirectoryObjectStore)',
      bare: 'anchor: bare Node.js http server, curl',
    });
    if (s.python !== undefined)
      line('reference: python3 http.server + sendfile, curl', s.python.text);
    line(
      'ratio pull / (direct read + sha256)',
      (s.registry.median / s.directSha256.median).toFixed(2),
    );
    line('ratio bare Node.js server / direct read', (s.bare.median / s.direct.median).toFixed(2));
    if (s.python !== undefined) {
      line(
        'ratio python sendfile server / direct read',
        (s.python.median / s.direct.median).toFixed(2),
      );
    }
    line('ratio pull / bare Node.js server', (s.registry.median / s.bare.median).toFixed(2));
    const rssOk = growth <= 32;
    result({
      figure: `registry RSS growth pulling ${mib} MiB: ${growth.toFixed(1)} MiB`,
      anchor: '32 MiB',
      ratio: growth / 32,
      max: 1,
    });
    line(
      'registry RSS',
      `${(before / 1024).toFixed(1)} MiB before, peak ${(peak / 1024).toFixed(1)}, ${(after / 1024).toFixed(1)} after; ` +
        `growth ${growth.toFixed(1)} MiB (budget ≤ 32) ${rssOk ? 'OK' : 'OVER BUDGET'}`,
    );
    fs.rmSync(bucket, { recursive: true, force: true });
  }

  async function s3Provider() {
    const endpoint =
      process.env.PODMIN_TEST_AWS_ENDPOINT || startEmulator(root, path.join(dir, 'emulator'));
    {
      const env = {
        ...process.env,
        AWS_ENDPOINT_URL_S3: endpoint,
        AWS_ACCESS_KEY_ID: 'testing',
        AWS_SECRET_ACCESS_KEY: 'testing',
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      };
      Object.assign(process.env, env);
      const size = s3Mib * 1024 * 1024;
      const bucket = `podmin-bench-${process.pid}`;
      const flags = ['--provider', 'aws', '--region', 'us-east-1', '--bucket', bucket];
      const store = bucketStore(flags, env);
      const client = new adapters.S3Client({
        region: 'us-east-1',
        endpoint,
        forcePathStyle: true,
        credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
      });
      await client.send(new adapters.CreateBucketCommand({ Bucket: bucket }));
      const file = path.join(dir, 's3-blob');
      const hex = writeRandomBlob(file, size);
      const key = `${repo}/blobs/sha256/${hex}`;
      await client.send(
        new adapters.PutObjectCommand({
          Bucket: bucket,
          Key: key,
          // A Buffer, not a stream: a streamed body goes out aws-chunked, which the emulator
          // decodes at a few MiB/s.
          Body: fs.readFileSync(file),
        }),
      );
      fs.rmSync(file);
      client.destroy();
      const registry = await startRegistry(flags, env);
      const blobUrl = `http://127.0.0.1:${registry.port}/v2/${repo}/blobs/sha256:${hex}`;
      // The bare server: one GetObject of the SDK's S3 client (the emulator takes only signed
      // requests), its body piped to the client.
      const barePort = await startServer(process.execPath, [
        '-e',
        `const http=require('http');const a=require(process.argv[1]);const c=new a.S3Client({region:'us-east-1',endpoint:process.argv[2],forcePathStyle:true,credentials:{accessKeyId:'testing',secretAccessKey:'testing'}});const s=http.createServer((q,r)=>{c.send(new a.GetObjectCommand({Bucket:process.argv[3],Key:process.argv[4]})).then((o)=>{r.writeHead(200,{'content-length':o.ContentLength});o.Body.pipe(r)},(e)=>{r.writeHead(500);r.end(String(e))})});s.listen(0,'127.0.0.1',()=>console.log(s.address().port))`,
        adaptersFile,
        endpoint,
        bucket,
        key,
      ]);
      // Warm every reader (S3 client set-up, first connection) outside the timed rounds.
      await directRead(store, key, size);
      await curlGet(blobUrl, size);
      await curlGet(`http://127.0.0.1:${barePort}/`, size);
      const results = await interleave({
        direct: () => directRead(store, key, size),
        directSha256: () => directRead(store, key, size, true),
        registry: () => curlGet(blobUrl, size),
        bare: () => curlGet(`http://127.0.0.1:${barePort}/`, size),
      });
      const s = Object.fromEntries(Object.entries(results).map(([k, v]) => [k, summary(v)]));
      console.log(
        `s3 provider (emulator ${endpoint}): ${s3Mib} MiB blob, ${rounds} rounds, median (min–max)`,
      );
      report('s3 emulator', s, {
        direct: 'direct object read (S3ObjectStore)',
        bare: 'anchor: bare Node.js server streaming from the emulator, curl',
      });
    }
  }

  await localProvider();
  await s3Provider();
});
