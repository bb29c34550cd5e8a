#!/usr/bin/env node
// Budget: at most 4 object-store requests for a deploy whose payloads already exist, at most 5
// with a new Pod payload (each payload is read, which verifies it; a new one is then created).
// A deploy that replaces an entry also writes one create-only history record of the entry it
// replaced (DESIGN §6.7); that write is counted and shown on its own, outside the 5.
// Deploy by digest (issue 34): pinning adds at most one request per distinct image (the
// repository's index.json, in parallel) with --no-preflight, and none beside the preflight, which
// already reads it. The commit-path budgets above are measured with --no-preflight --no-pin.
// Signed desired state (issue 34): a deploy signed with a local key makes the same object-store
// requests as an unsigned one and no other (the key signs in-process), while an unsigned write
// first reads the trust list in Parameter Store (one request, shown beside the counts).
// Runs the real CLI against the S3 emulator through a counting HTTP proxy on loopback.
//   node bench/deploy-requests.mjs     (needs PODMIN_TEST_AWS_ENDPOINT, or starts the emulator)
// Exits 1 when a budget is missed, 2 when a command fails.
import { generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { main, result, startEmulator, tempDir } from './lib/bench.mjs';
import { bundleLibraries } from './lib/bundle-libraries.mjs';
import { deployWebArgs, emulatorEnv, homeEnv, runPodmin } from './lib/cli.mjs';
import { startRecordingProxy } from './lib/recording-proxy.mjs';

const root = path.resolve(import.meta.dirname, '..');
await main(async () => {
  const state = tempDir('podmin-bench-requests-');
  const upstream = process.env.PODMIN_TEST_AWS_ENDPOINT || startEmulator(root, state);
  const proxy = await startRecordingProxy(upstream);
  // Every service through the proxy: an unsigned write's trust-list read goes to Parameter Store.
  const env = {
    ...process.env,
    ...homeEnv(state),
    ...emulatorEnv(proxy.endpoint, { allServices: true }),
  };
  const podmin = (...args) => runPodmin(args, { cwd: state, env });
  const bucket = `podmin-bench-${process.pid}`;
  /** Whether a recorded request went to the bucket (path-style), not to another service. */
  const toBucket = (what) => what.split(' ')[1]?.startsWith(`/${bucket}`) === true;
  /**
   * The object-store requests of `podmin …args`, as `METHOD /path`, with `others`: what it
   * requested of other services (an unsigned write's trust-list read in Parameter Store).
   */
  const requestsOf = async (...args) => {
    proxy.take();
    await podmin(...args);
    const taken = proxy.take();
    const all = taken.map((r) => r.what);
    return Object.assign(all.filter(toBucket), {
      others: all.filter((w) => !toBucket(w)),
      targets: taken.map((r) => r.target).filter((t) => t !== undefined),
    });
  };
  /** ` + N other (…)` for requests to other services, or nothing. */
  const othersOf = (requests) =>
    requests.others.length === 0
      ? ''
      : ` + ${requests.others.length} other (${requests.others.join(', ')})`;
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
  const deployArgs = (tag) => deployWebArgs(`hello:${tag}`, '--service');
  await podmin(...deployArgs('v1'));
  await podmin('delete', 'web', '-g', 'default');
  const existing = await requestsOf(...deployArgs('v1'));
  const unchanged = await requestsOf(...deployArgs('v1'));
  const newPod = await requestsOf(...deployArgs('v2'));
  console.log(
    `deploy with existing payloads: ${existing.length} requests (${existing.join(', ')})${othersOf(existing)}`,
  );
  console.log(
    `redeploy of an unchanged entry: ${unchanged.length} requests (${unchanged.join(', ')})${othersOf(unchanged)}`,
  );
  console.log(
    `deploy with a new Pod payload: ${newPod.length} requests (${newPod.join(', ')})${othersOf(newPod)}`,
  );
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
  // Signed with a local key: the same two deploys as above (over existing payloads after a
  // delete, then a new Pod payload replacing an entry), each signed.
  const keyFile = path.join(state, 'bench-deployer.key');
  const { privateKey } = generateKeyPairSync('ed25519');
  writeFileSync(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  const signed = (...args) => [...args, '--signing-key', keyFile];
  await podmin(...signed('delete', 'web', '-g', 'default'));
  const signedExisting = await requestsOf(...signed(...deployArgs('v1')));
  const signedNewPod = await requestsOf(...signed(...deployArgs('v3')));
  // Read back past the proxy and verified as a node verifies it.
  const lib = await bundleLibraries(path.join(state, 'trust.cjs'), [
    "export { parseSignedIndex, serializeIndex } from '@podmin/util-desired-state';",
    "export { publicKeyOfPrivate, verifyIndexSignature } from '@podmin/util-trust';",
    "export { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';",
  ]);
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  const s3 = new lib.S3Client({
    region: 'us-east-1',
    endpoint: upstream,
    forcePathStyle: true,
    credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
  });
  // The SDK retries a failed request but not a body whose socket closes after the headers
  // arrived ("aborted"); this read-back is the bench's own check, so it reads again.
  const readIndex = async (attempt = 1) => {
    try {
      const stored = await s3.send(
        new lib.GetObjectCommand({ Bucket: bucket, Key: 'deployments/index.json' }),
      );
      return await stored.Body.transformToString();
    } catch (err) {
      if (attempt >= 3 || !/aborted|ECONNRESET|socket hang up/i.test(String(err?.message)))
        throw err;
      console.log(`read-back of the index: ${err.message}; reading again (${attempt + 1}/3)`);
      return readIndex(attempt + 1);
    }
  };
  const storedText = await readIndex();
  s3.destroy();
  const { index, signature } = lib.parseSignedIndex(storedText);
  const publicKey = lib.publicKeyOfPrivate(
    privateKey.export({ type: 'pkcs8', format: 'pem' }),
    'key',
  );
  const verdict = lib.verifyIndexSignature({
    cluster: 'bench',
    entriesText: lib.serializeIndex(index),
    signature,
    deployers: {
      version: 1,
      deployers: [
        {
          name: 'bench-deployer',
          algorithm: 'ed25519',
          publicKey: publicKey.pem,
          added: '2026-12-01',
        },
      ],
    },
  });
  if (!verdict.trusted) {
    throw new Error(`the index the signed deploys wrote does not verify: ${verdict.reason}`);
  }
  console.log(
    `signed deploy (local key) with existing payloads: ${signedExisting.length} requests (${signedExisting.join(', ')})${othersOf(signedExisting)}`,
  );
  console.log(
    `signed deploy (local key) with a new Pod payload: ${signedNewPod.length} requests (${signedNewPod.join(', ')})${othersOf(signedNewPod)}`,
  );
  // Requests signing adds over the unsigned deploy's object-store requests: none expected.
  const signingAdds = Math.max(
    signedExisting.length + signedExisting.others.length - existing.length,
    signedNewPod.length + signedNewPod.others.length - newPod.length,
  );
  console.log(
    `deploy-requests signing: +${signingAdds} requests with a local key (budget 0; the unsigned deploys above also read the trust list once: ${existing.others.length}, ${newPod.others.length})`,
  );
  result({
    figure: `requests a local signing key adds to a deploy: ${signingAdds}`,
    anchor: '0 requests (signed in-process)',
    ratio: signingAdds,
    max: 0,
  });
  // Signed with an AWS KMS key on the emulator (ECC_NIST_P256): one Sign call, and the same
  // object-store requests as the unsigned deploy.
  const kmsLib = await bundleLibraries(path.join(state, 'kms.cjs'), [
    "export { CreateKeyCommand, KMSClient } from '@aws-sdk/client-kms';",
  ]);
  const kms = new kmsLib.KMSClient({
    region: 'us-east-1',
    endpoint: upstream,
    credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
  });
  const created = await kms.send(
    new kmsLib.CreateKeyCommand({ KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY' }),
  );
  kms.destroy();
  const kmsSigned = (...args) => [
    ...args,
    '--kms-key',
    created.KeyMetadata.Arn,
    '--signer',
    'bench-ci',
  ];
  await podmin(...kmsSigned('delete', 'web', '-g', 'default'));
  const kmsExisting = await requestsOf(...kmsSigned(...deployArgs('v1')));
  const signCalls = kmsExisting.targets.filter((t) => t === 'TrentService.Sign').length;
  const kmsOthers = kmsExisting.targets.filter((t) => t !== 'TrentService.Sign');
  console.log(
    `signed deploy (KMS key) with existing payloads: ${kmsExisting.length} object-store requests (${kmsExisting.join(', ')}), ${signCalls} KMS Sign${kmsOthers.length === 0 ? '' : `, other: ${kmsOthers.join(', ')}`}`,
  );
  const kmsAdds = kmsExisting.length - existing.length + kmsOthers.length;
  result({
    figure: `requests a KMS signing key adds to a deploy: ${signCalls} Sign + ${kmsAdds} other`,
    anchor: '1 Sign call',
    ratio: signCalls + kmsAdds,
    max: 1,
  });
  // Deploy by digest: a pushed image, each mode measured over payloads that already exist.
  const fixture = path.join(root, 'libs/cli/feature-image/src/__fixtures__/hello-app');
  await podmin('build', fixture, '-t', 'pinned:v1');
  await podmin('push', 'pinned:v1');
  const pinArgs = (more) => ['deploy', 'pinned', '-g', 'default', '--image', 'pinned:v1', ...more];
  const overExisting = async (...more) => {
    await podmin(...pinArgs(more));
    await podmin('delete', 'pinned', '-g', 'default');
    return requestsOf(...pinArgs(more));
  };
  const modes = {
    '--no-preflight --no-pin': await overExisting('--no-preflight', '--no-pin'),
    '--no-preflight (pinned)': await overExisting('--no-preflight'),
    '--no-pin (preflight)': await overExisting('--no-pin'),
    'default (preflight, pinned)': await overExisting(),
  };
  for (const [mode, requests] of Object.entries(modes)) {
    console.log(
      `deploy ${mode}, payloads exist: ${requests.length} requests (${requests.join(', ')})`,
    );
  }
  const pinAlone =
    modes['--no-preflight (pinned)'].length - modes['--no-preflight --no-pin'].length;
  const pinBesidePreflight =
    modes['default (preflight, pinned)'].length - modes['--no-pin (preflight)'].length;
  console.log(
    `deploy-requests pinning: +${pinAlone} without the preflight (budget 1 per distinct image, 1 here), +${pinBesidePreflight} with it (budget 0)`,
  );
  result({
    figure: `requests pinning adds to a deploy of one image without the preflight: ${pinAlone}`,
    anchor: '1 request per distinct image',
    ratio: pinAlone,
    max: 1,
  });
  result({
    figure: `requests pinning adds beside the preflight: ${pinBesidePreflight}`,
    anchor: '0 requests (the preflight read is reused)',
    ratio: pinBesidePreflight,
    max: 0,
  });
  // One history record exactly: a missing or a second one is over.
  result({
    figure: `history records written by a deploy replacing an entry: ${historyWrites.length}`,
    anchor: '1 record',
    ratio: historyWrites.length === 1 ? 1 : 0,
    min: 1,
  });
});
