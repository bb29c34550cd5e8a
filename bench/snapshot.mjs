#!/usr/bin/env node
// Snapshot cost (issue 13, no budget in DESIGN.md §8 yet): the leader's computation of the
// Service snapshot (backend selection + canonical protobuf encoding + revision digest) and its
// size in dns/services.pb, at 1,000 and 10,000 Services × 3 ready backends, plus a strict decode
// (what every node does with the streamed or stored snapshot). The library code is
// @podmin/agent-feature-coordinator bundled here with esbuild, the .proto files beside it.
//   node bench/snapshot.mjs [runs=7]
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { bundleLibraries } from './lib/bundle-libraries.mjs';
import { tempDir, yieldToSignals } from './lib/bench.mjs';

const root = path.resolve(import.meta.dirname, '..');
const runs = Number(process.argv[2] ?? 7);
if (!Number.isInteger(runs) || runs < 1) {
  console.error('usage: node bench/snapshot.mjs [runs]');
  process.exit(2);
}
const SIZES = [1000, 10000];
const BACKENDS = 3;
const NODES = 100;

// Removed at the end and on SIGINT/SIGTERM/SIGHUP (bench/lib/bench.mjs).
const dir = tempDir('podmin-bench-snapshot-');
try {
  const libFile = path.join(dir, 'snapshot-lib.cjs');
  // protoRoot() looks for proto/ beside the bundle, as in a built agent.
  fs.cpSync(path.join(root, 'libs/agent/contracts/proto'), path.join(dir, 'proto'), {
    recursive: true,
  });
  // Files, not the package index, which also loads the gRPC server side (and with it the
  // NestJS microservices peer the bundle leaves out).
  const lib = await bundleLibraries(libFile, [
    "export { computeSnapshot } from './libs/agent/feature-coordinator/src/snapshot/compute-snapshot';",
    "export { encodeSnapshot, decodeSnapshot } from './libs/agent/feature-coordinator/src/snapshot/snapshot-codec';",
  ]);

  const median = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.floor(s.length / 2)];
  };
  const time = (fn) => {
    const times = [];
    let result;
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      result = fn();
      times.push(performance.now() - t0);
    }
    return { ms: median(times), min: Math.min(...times), max: Math.max(...times), result };
  };
  const fmt = ({ ms, min, max }) =>
    `${ms.toFixed(1).padStart(8)} ms  (min ${min.toFixed(1)}, max ${max.toFixed(1)})`;

  console.log(
    `runs per line: ${runs} (median, min, max); ${BACKENDS} backends a Service on ${NODES} nodes`,
  );
  for (const count of SIZES) {
    await yieldToSignals();
    const services = [];
    const nodes = Array.from({ length: NODES }, (_, n) => ({
      nodeId: `i-0${n.toString(16).padStart(16, '0')}`,
      prefix: `2600:1f14:abc:1200:${(n + 1).toString(16)}::/80`,
      endpoints: [],
    }));
    for (let i = 0; i < count; i++) {
      const namespace = `team-${i % 50}`;
      const name = `service-${i}`;
      services.push({
        namespace,
        name,
        object: {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name, namespace },
          spec: {
            selector: { 'app.kubernetes.io/name': name, tier: 'backend' },
            ports: [{ port: 443, protocol: 'TCP', targetPort: 8443 }],
          },
        },
      });
      for (let b = 0; b < BACKENDS; b++) {
        const n = (i * BACKENDS + b) % NODES;
        nodes[n].endpoints.push({
          namespace,
          labels: {
            'app.kubernetes.io/name': name,
            tier: 'backend',
            'pod-template-hash': 'abc123',
          },
          address: `2600:1f14:abc:1200:${(n + 1).toString(16)}::${(i + 1).toString(16)}`,
        });
      }
    }
    const input = { cluster: 'bench', services, nodes, generation: 42 };
    const compute = time(() => lib.computeSnapshot(input).snapshot);
    // computeSnapshot keeps the bytes of what it computed, so encoding its result only adds the
    // header; a copy (as a caller building a snapshot by hand would have) goes through the
    // checks and protobufjs. Copies are made before timing.
    const kept = time(() => lib.encodeSnapshot(compute.result));
    const copies = Array.from({ length: runs }, () => structuredClone(compute.result));
    let next = 0;
    const encode = time(() => lib.encodeSnapshot(copies[next++]));
    const both = time(() => lib.encodeSnapshot(lib.computeSnapshot(input).snapshot));
    const bytes = both.result;
    const decode = time(() => lib.decodeSnapshot(bytes, { cluster: 'bench' }));
    const backends = compute.result.services.reduce((n, s) => n + s.backends.length, 0);
    if (backends !== count * BACKENDS || decode.result.services.length !== count) {
      throw new Error(`expected ${count * BACKENDS} backends, got ${backends}`);
    }
    console.log(`${count} Services × ${BACKENDS} backends`);
    console.log(`  compute (select, sort, revision)   ${fmt(compute)}`);
    console.log(`  encode a computed snapshot (kept)  ${fmt(kept)}`);
    console.log(`  encode a copy (checks + protobuf)  ${fmt(encode)}`);
    console.log(`  compute + encode                   ${fmt(both)}`);
    console.log(`  strict decode (re-encode, digest)  ${fmt(decode)}`);
    console.log(
      `  size of dns/services.pb            ${String(bytes.length).padStart(8)} bytes (${(bytes.length / count).toFixed(0)} bytes a Service)`,
    );
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
