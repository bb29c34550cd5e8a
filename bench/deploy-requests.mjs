#!/usr/bin/env node
// Budget: at most 4 object-store requests for a deploy whose payloads already exist, at most 5
// with a new Pod payload (each payload is read, which verifies it; a new one is then created).
// A deploy that replaces an entry also writes one create-only history record of the entry it
// replaced (DESIGN §6.7); that write is counted and shown on its own, outside the 5.
// Runs the real CLI against the S3 emulator through a counting HTTP proxy on loopback.
//   node bench/deploy-requests.mjs     (needs PODMIN_TEST_AWS_ENDPOINT, or starts the emulator)
// Exits 1 when a budget is missed, 2 when a command fails.
import path from 'node:path';
import { main, result, startEmulator, tempDir } from './lib/bench.mjs';
import { emulatorEnv, homeEnv, runPodmin } from './lib/cli.mjs';
import { startRecordingProxy } from './lib/recording-proxy.mjs';

const root = path.resolve(import.meta.dirname, '..');
await main(async () => {
  const state = tempDir('podmin-bench-requests-');
  const upstream = process.env.PODMIN_TEST_AWS_ENDPOINT || startEmulator(root, state);
  const proxy = await startRecordingProxy(upstream);
  const env = { ...process.env, ...homeEnv(state), ...emulatorEnv(proxy.endpoint) };
  const podmin = (...args) => runPodmin(args, { cwd: state, env });
  /** What `podmin …args` requested, as `METHOD /path`. */
  const requestsOf = async (...args) => {
    proxy.take();
    await podmin(...args);
    return proxy.take().map((r) => r.what);
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
  const deployArgs = (tag) => [
    'deploy',
    '--no-preflight',
    'web',
    '-g',
    'default',
    '--image',
    `hello:${tag}`,
    '--service',
  ];
  await podmin(...deployArgs('v1'));
  await podmin('delete', 'web', '-g', 'default');
  const existing = await requestsOf(...deployArgs('v1'));
  const unchanged = await requestsOf(...deployArgs('v1'));
  const newPod = await requestsOf(...deployArgs('v2'));
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
