#!/usr/bin/env node
// Budget: at most 4 object-store requests for a deploy whose payloads already exist, at most 5
// with a new Pod payload (each payload is read, which verifies it; a new one is then created).
// A deploy that replaces an entry also writes one create-only history record of the entry it
// replaced (DESIGN §6.7); that write is counted and shown on its own, outside the 5.
// Runs the real CLI against the S3 emulator through a counting HTTP proxy on loopback.
//   node bench/deploy-requests.mjs     (needs PODMIN_TEST_AWS_ENDPOINT, or starts the emulator)
// Exits 1 when a budget is missed, 2 when a command fails.
import http from 'node:http';
import path from 'node:path';
import { killAtCleanup, main, onCleanup, result, startEmulator, tempDir } from './lib/bench.mjs';

const root = path.resolve(import.meta.dirname, '..');
const bin = path.join(root, 'dist/bin/podmin.cjs');
await main(async () => {
  const state = tempDir('podmin-bench-requests-');
  const upstream = process.env.PODMIN_TEST_AWS_ENDPOINT || startEmulator(root, state);
  const target = new URL(upstream);
  let requests = [];
  const proxy = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url.split('?')[0]}`);
    const fwd = http.request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (up) => {
        res.writeHead(up.statusCode, up.headers);
        up.pipe(res);
      },
    );
    req.pipe(fwd);
  });
  await new Promise((r) => proxy.listen(0, '127.0.0.1', r));
  onCleanup(() => proxy.close());
  const endpoint = `http://127.0.0.1:${proxy.address().port}`;
  const env = {
    ...process.env,
    HOME: state,
    XDG_CONFIG_HOME: path.join(state, 'c'),
    XDG_DATA_HOME: path.join(state, 'd'),
    XDG_CACHE_HOME: path.join(state, 'k'),
    AWS_ENDPOINT_URL_S3: endpoint,
    AWS_ACCESS_KEY_ID: 'testing',
    AWS_SECRET_ACCESS_KEY: 'testing',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
  const podmin = async (...args) => {
    const { spawn } = await import('node:child_process');
    return new Promise((resolve, reject) => {
      const child = killAtCleanup(
        spawn(process.execPath, [bin, ...args], {
          cwd: state,
          env,
          stdio: ['ignore', 'ignore', 'pipe'],
        }),
      );
      let err = '';
      child.stderr.on('data', (d) => (err += d));
      child.on('close', (code) =>
        code === 0 ? resolve() : reject(new Error(`podmin ${args.join(' ')}: ${err}`)),
      );
    });
  };
  const bucket = `podmin-bench-${process.pid}`;
  await podmin(
    'connect',
    'bench',
    '--provider',
    'aws',
    '--region',
    'us-east-1',
    '--bucket',
    bucket,
  );
  const deployArgs = [
    'deploy',
    '--no-preflight',
    'web',
    '-g',
    'default',
    '--image',
    'hello:v1',
    '--service',
  ];
  await podmin(...deployArgs);
  await podmin('delete', 'web', '-g', 'default');
  requests = [];
  await podmin(...deployArgs);
  const existing = requests;
  requests = [];
  await podmin(...deployArgs);
  const unchanged = requests;
  requests = [];
  await podmin(
    'deploy',
    '--no-preflight',
    'web',
    '-g',
    'default',
    '--image',
    'hello:v2',
    '--service',
  );
  const newPod = requests;
  console.log(
    `deploy with existing payloads: ${existing.length} requests (${existing.join(', ')})`,
  );
  console.log(
    `redeploy of an unchanged entry: ${unchanged.length} requests (${unchanged.join(', ')})`,
  );
  console.log(`deploy with a new Pod payload: ${newPod.length} requests (${newPod.join(', ')})`);
  const ratio = existing.length / 4;
  console.log(
    `deploy-requests ratio: ${ratio.toFixed(2)} of budget (4 requests) ${existing.length <= 4 ? 'OK' : 'OVER BUDGET'}`,
  );
  result({
    figure: `requests of a deploy with existing payloads: ${existing.length}`,
    anchor: '4 requests',
    ratio,
    max: 1,
  });
  const historyWrites = newPod.filter((r) => /^PUT \/[^/]+\/history\//.test(r));
  const newPodCommit = newPod.length - historyWrites.length;
  console.log(
    `deploy-requests new-Pod ratio: ${(newPodCommit / 5).toFixed(2)} of budget (5 requests, plus ${historyWrites.length} history record) ${newPodCommit <= 5 && historyWrites.length === 1 ? 'OK' : 'OVER BUDGET'}`,
  );
  result({
    figure: `requests of a deploy with a new Pod payload: ${newPodCommit} + ${historyWrites.length} history record`,
    anchor: '5 requests + 1 history record',
    ratio: newPodCommit / 5,
    max: 1,
  });
  // One history record exactly: a missing or a second one is over.
  result({
    figure: `history records written by a deploy replacing an entry: ${historyWrites.length}`,
    anchor: '1 record',
    ratio: historyWrites.length === 1 ? 1 : 0,
    min: 1,
  });
});
