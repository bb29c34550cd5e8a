#!/usr/bin/env node
// Budget (DESIGN.md §8): pulling a blob through the node registry runs at ≥ 0.9× a direct read
// of the same object, and the registry's RSS grows by ≤ 32 MiB while serving a 1 GiB blob.
// Writes a random blob (streamed to disk, never held in memory) into a local bucket layout,
// starts dist/bin/agent-registry.cjs on it, then alternates direct reads of the object file
// and HTTP GETs of /v2/<repo>/blobs/<digest> (bodies discarded), sampling the registry's VmRSS.
//   node bench/registry-pull.mjs [MiB=1024] [rounds=3]
import { spawn } from 'node:child_process';
import { createHash, randomFillSync } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';

const root = path.resolve(import.meta.dirname, '..');
const bin = path.join(root, 'dist/bin/agent-registry.cjs');
if (!fs.existsSync(bin)) {
  console.error(`${bin} is missing; run \`npm run build\` first`);
  process.exit(2);
}
const mib = Number(process.argv[2] ?? 1024);
const rounds = Number(process.argv[3] ?? 3);
const size = mib * 1024 * 1024;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-bench-registry-'));
const repo = 'apps/bench/blob';

// 1. The blob, written in 4 MiB random chunks while hashing.
const temp = path.join(dir, 'blob.tmp');
const hash = createHash('sha256');
{
  const fd = fs.openSync(temp, 'w');
  const chunk = Buffer.alloc(4 * 1024 * 1024);
  for (let written = 0; written < size; written += chunk.length) {
    const part = chunk.subarray(0, Math.min(chunk.length, size - written));
    randomFillSync(part);
    hash.update(part);
    fs.writeSync(fd, part);
  }
  fs.closeSync(fd);
}
const hex = hash.digest('hex');
const digest = `sha256:${hex}`;
const objectFile = path.join(dir, repo, 'blobs', 'sha256', hex);
fs.mkdirSync(path.dirname(objectFile), { recursive: true });
fs.renameSync(temp, objectFile);
fs.writeFileSync(path.join(dir, repo, 'oci-layout'), '{"imageLayoutVersion":"1.0.0"}');
fs.writeFileSync(
  path.join(dir, repo, 'index.json'),
  '{"manifests":[],"mediaType":"application/vnd.oci.image.index.v1+json","schemaVersion":2}',
);

// 2. The registry on an ephemeral loopback port.
const child = spawn(
  process.execPath,
  [bin, '--provider', 'local', '--bucket', dir, '--cluster', 'bench', '--listen', '127.0.0.1:0'],
  { stdio: ['ignore', 'ignore', 'pipe'] },
);
const port = await new Promise((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error('registry did not start within 20 s')), 20_000);
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

// 3. A bare Node.js HTTP server streaming the same file (no framework, no verification), in
// its own process like the registry: the ceiling of any Node.js HTTP server on this machine.
const bare = spawn(
  process.execPath,
  [
    '-e',
    `const http=require('http'),fs=require('fs');const f=process.argv[1];const s=http.createServer((q,r)=>{r.writeHead(200,{'content-length':fs.statSync(f).size});fs.createReadStream(f,{highWaterMark:1048576}).pipe(r)});s.listen(0,'127.0.0.1',()=>console.log(s.address().port))`,
    objectFile,
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const barePort = await new Promise((resolve) =>
  createInterface({ input: bare.stdout }).once('line', (l) => resolve(Number(l))),
);

const rssKiB = () => {
  const status = fs.readFileSync(`/proc/${child.pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
};
let peakRss = 0;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssKiB())), 20);

const directRead = () =>
  new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    let bytes = 0;
    fs.createReadStream(objectFile, { highWaterMark: 1024 * 1024 })
      .on('data', (c) => (bytes += c.length))
      .on('end', () => resolve({ bytes, ms: Number(process.hrtime.bigint() - start) / 1e6 }))
      .on('error', reject);
  });
const registryPull = (toPort = port) =>
  new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    let bytes = 0;
    http
      .get({ host: '127.0.0.1', port: toPort, path: `/v2/${repo}/blobs/${digest}` }, (res) => {
        if (res.statusCode !== 200) reject(new Error(`GET blob: HTTP ${res.statusCode}`));
        res.on('data', (c) => (bytes += c.length));
        res.on('end', () => {
          if (bytes !== size) reject(new Error(`GET blob: ${bytes} of ${size} bytes`));
          resolve({ bytes, ms: Number(process.hrtime.bigint() - start) / 1e6 });
        });
        res.on('error', reject);
      })
      .on('error', reject);
  });

try {
  await directRead(); // warm the page cache so both sides read from memory
  const before = rssKiB();
  peakRss = before;
  const direct = [];
  const pulled = [];
  const bareServed = [];
  for (let i = 0; i < rounds; i++) {
    direct.push(await directRead());
    pulled.push(await registryPull());
    bareServed.push(await registryPull(barePort));
  }
  await new Promise((r) => setTimeout(r, 100));
  const after = rssKiB();
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const mibps = (r) => r.bytes / 1024 / 1024 / (r.ms / 1000);
  const directRate = median(direct.map(mibps));
  const pullRate = median(pulled.map(mibps));
  const ratio = pullRate / directRate;
  const growth = (Math.max(peakRss, after) - before) / 1024;
  console.log(`blob: ${mib} MiB (${digest.slice(0, 19)}…), ${rounds} rounds, medians`);
  console.log(`direct object read: ${directRate.toFixed(0)} MiB/s`);
  console.log(`registry blob pull: ${pullRate.toFixed(0)} MiB/s (verifies sha256 while streaming)`);
  console.log(
    `ratio pull/direct: ${ratio.toFixed(2)} (budget ≥ 0.90) ${ratio >= 0.9 ? 'OK' : 'OVER BUDGET'}`,
  );
  const bareRate = median(bareServed.map(mibps));
  console.log(
    `bare Node.js HTTP server, same file: ${bareRate.toFixed(0)} MiB/s; registry/bare ${(pullRate / bareRate).toFixed(2)}`,
  );
  console.log(
    `registry RSS: ${(before / 1024).toFixed(1)} MiB before, peak ${(peakRss / 1024).toFixed(1)} MiB, ` +
      `${(after / 1024).toFixed(1)} MiB after; growth ${growth.toFixed(1)} MiB (budget ≤ 32) ${growth <= 32 ? 'OK' : 'OVER BUDGET'}`,
  );
} finally {
  clearInterval(sampler);
  child.kill('SIGTERM');
  bare.kill('SIGTERM');
  fs.rmSync(dir, { recursive: true, force: true });
}
