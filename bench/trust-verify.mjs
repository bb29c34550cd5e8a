#!/usr/bin/env node
// Signed desired state on the node (issue 34): what verifying a changed index adds to a poll of
// agent-staticpod for an index of 1,000 entries, ed25519 and ecdsa-p256-sha256 signatures. The
// node already parses the index (printed for scale); verification adds the canonical entries
// text (serializeIndex), the signed statement (its SHA-512), the signature check and the trust
// list (read from Parameter Store at every index change, parsed again only when its bytes
// changed). The budgeted figure is agent-staticpod's own IndexTrust.check with the trust list
// served from memory (the Parameter Store round trip is I/O, not verification), median per
// poll ≤ 5 ms; its parts are printed beside it, and the check of a new generation, which also
// writes the generation to disk (fsync), is printed unbudgeted. The code is bundled here with
// esbuild from the workspace's sources, as the agent ships it.
//   node bench/trust-verify.mjs [--quick] [runs]
// --quick: 100 runs per algorithm instead of 1,000 (a smoke run).
import { generateKeyPairSync } from 'node:crypto';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { bundleLibraries } from './lib/bundle-libraries.mjs';
import { main, result, tempDir, yieldToSignals } from './lib/bench.mjs';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const positional = args.filter((a) => a !== '--quick');
const runs = Number(positional[0] ?? (quick ? 100 : 1000));
if (!Number.isInteger(runs) || runs < 1 || positional.length > 1) {
  console.error('usage: node bench/trust-verify.mjs [--quick] [runs]');
  process.exit(2);
}
const ENTRIES = 1000;
const BUDGET_MS = 5;
const CLUSTER = 'bench';
/** Deployers in the trust list besides the signer (a team's worth). */
const OTHER_DEPLOYERS = 3;

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};
const p95 = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(s.length * 0.95) - 1)];
};

await main(async () => {
  // Removed at the end and on SIGINT/SIGTERM/SIGHUP (bench/lib/bench.mjs).
  const dir = tempDir('podmin-bench-trust-');
  const lib = await bundleLibraries(path.join(dir, 'trust-lib.cjs'), [
    "export { parseSignedIndex, podPayloadKey, serializeIndex, servicePayloadKey } from '@podmin/util-desired-state';",
    "export { localSigner, parseDeployers, publicKeyOfPrivate, serializeDeployers, signIndexText, signedStatement, verifyIndexSignature } from '@podmin/util-trust';",
    // The file, not the package index, which also loads the NestJS module and gRPC server.
    "export { IndexTrust } from './libs/agent/feature-staticpod/src/index-trust';",
  ]);

  // An index as deploys write it: 1,000 deployments over 10 NodeGroups, every third with a
  // Service, each naming its payload by SHA-512.
  const index = {};
  for (let i = 0; i < ENTRIES; i++) {
    const nodegroup = `group-${i % 10}`;
    const name = `app-${i}`;
    const entry = { pod: lib.podPayloadKey(nodegroup, `kind: Pod\nmetadata: { name: ${name} }\n`) };
    if (i % 3 === 0) {
      entry.service = lib.servicePayloadKey(`team-${i % 7}`, name, `kind: Service # ${name}\n`);
    }
    index[`${nodegroup}/${name}`] = entry;
  }
  const entriesText = lib.serializeIndex(index);

  const keys = {
    ed25519: generateKeyPairSync('ed25519'),
    'ecdsa-p256-sha256': generateKeyPairSync('ec', { namedCurve: 'prime256v1' }),
  };
  const pemOf = (pair) => pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const deployer = (name, privatePem) => {
    const key = lib.publicKeyOfPrivate(privatePem, name);
    return { name, algorithm: key.algorithm, publicKey: key.pem, added: '2026-01-01T00:00:00Z' };
  };
  const others = Array.from({ length: OTHER_DEPLOYERS }, (_, i) =>
    deployer(`other-${i}`, pemOf(generateKeyPairSync('ed25519'))),
  );

  console.log(
    `${ENTRIES} index entries (${Buffer.byteLength(entriesText)} bytes canonical), trust list of ${OTHER_DEPLOYERS + 1} deployers; ${runs} runs per line (median, p95, max)`,
  );
  const fmt = (times) =>
    `${median(times).toFixed(3).padStart(7)} ms  (p95 ${p95(times).toFixed(3)}, max ${Math.max(...times).toFixed(3)})`;

  let over = false;
  for (const [algorithm, pair] of Object.entries(keys)) {
    const privatePem = pemOf(pair);
    const signer = lib.localSigner('alice', privatePem, 'bench');
    const trustList = Buffer.from(
      lib.serializeDeployers({
        version: 1,
        deployers: [deployer('alice', privatePem), ...others],
      }),
    );
    const signed = await lib.signIndexText(signer, CLUSTER, entriesText, undefined, Date.now());
    const body = Buffer.from(signed.text);
    // What the node already does at every index change today, for scale.
    const read = lib.parseSignedIndex(body);
    if (read.signature?.generation !== signed.signature.generation) {
      throw new Error('the signed index does not carry its signature');
    }

    // agent-staticpod's check, its trust list served from memory, its state in the temp dir.
    const trust = new lib.IndexTrust(
      { get: () => Promise.resolve(trustList) },
      { cluster: CLUSTER, stateDir: path.join(dir, algorithm) },
    );
    const first = await trust.check(read.index, read.signature);
    if (!first.enforced || !first.trusted) {
      throw new Error(`the bench's own index is refused: ${JSON.stringify(first)}`);
    }
    // A tampered copy must be refused, or the bench would time a check that checks nothing.
    const tampered = { ...read.index, 'group-0/evil': read.index['group-0/app-0'] };
    const refused = await trust.check(tampered, read.signature);
    if (refused.trusted !== false) throw new Error('a tampered index was accepted');

    const time = async (fn, count = runs) => {
      for (let i = 0; i < Math.min(50, count); i++) await fn(i);
      const times = [];
      for (let i = 0; i < count; i++) {
        if (i % 50 === 0) await yieldToSignals();
        const t0 = performance.now();
        await fn(i);
        times.push(performance.now() - t0);
      }
      return times;
    };
    const parse = await time(() => lib.parseSignedIndex(body));
    const list = await time(() => lib.parseDeployers(trustList, 'bench'));
    const serialize = await time(() => lib.serializeIndex(read.index));
    const statement = await time(() =>
      lib.signedStatement(CLUSTER, read.signature.generation, entriesText),
    );
    const deployers = lib.parseDeployers(trustList, 'bench');
    const verify = await time(() =>
      lib.verifyIndexSignature({
        cluster: CLUSTER,
        entriesText,
        signature: read.signature,
        deployers,
      }),
    );
    const total = await time(() => trust.check(read.index, read.signature));
    // Newer generations, signed beforehand: each check also writes its generation (fsync).
    const writes = Math.min(runs, 100);
    const newer = [];
    let previous = read.signature;
    for (let i = 0; i < 2 * writes; i++) {
      const next = await lib.signIndexText(signer, CLUSTER, entriesText, previous, 0);
      newer.push(next.signature);
      previous = next.signature;
    }
    let n = 0;
    const written = await time(() => trust.check(read.index, newer[n++]), writes);
    console.log(`${algorithm}`);
    console.log(`  parse the index (paid today)         ${fmt(parse)}`);
    console.log(`  parse the trust list (when changed)  ${fmt(list)}`);
    console.log(`  serializeIndex (canonical text)      ${fmt(serialize)}`);
    console.log(`  signedStatement (SHA-512)            ${fmt(statement)}`);
    console.log(`  verifyIndexSignature (statement +    ${fmt(verify)}`);
    console.log(`    signature check)`);
    console.log(`  IndexTrust.check: added per poll     ${fmt(total)}`);
    console.log(`  IndexTrust.check of a new generation ${fmt(written)}`);
    console.log(`    (+ the generation written, fsync; ${writes} runs, unbudgeted)`);
    const ms = median(total);
    const ok = result({
      figure: `verify a changed index of ${ENTRIES} entries, ${algorithm}: ${ms.toFixed(2)} ms (median of ${runs})`,
      anchor: `${BUDGET_MS} ms`,
      ratio: ms / BUDGET_MS,
      max: 1,
    });
    if (!ok) over = true;
  }
  return over;
});
