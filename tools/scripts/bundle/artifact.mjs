// The agent artifact (`bundle.mjs artifact`): what it holds, and the deterministic archive.
import fs from 'node:fs';
import path from 'node:path';
import { KOFFI_PLATFORMS, pkg, require, root } from './common.mjs';

/**
 * What the agent artifact holds, as tar entries in archive order (directories before their
 * files, all sorted): every agent bundle, the DNS UDP worker, the eBPF objects, koffi's native
 * modules and the .proto files, each read from dist/bin. The list comes from the same tables
 * the bundle steps write from, not from what dist/bin happens to hold, so a file a process
 * loads that is missing fails the pack instead of shipping a node that cannot start.
 */
export function artifactEntries(agentTargets) {
  const bin = path.join(root, 'dist/bin');
  const files = [];
  for (const t of agentTargets) {
    files.push(path.basename(t.out));
    if (t.udpWorker) files.push('agent-dns-udp.cjs');
    if (t.bpf) {
      for (const obj of fs.readdirSync(path.join(root, 'bpf/obj')).filter((n) => n.endsWith('.o')))
        files.push(`bpf/${obj}`);
    }
  }
  for (const platform of KOFFI_PLATFORMS) files.push(`koffi/${platform}/koffi.node`);
  const walk = (dir, prefix) =>
    fs
      .readdirSync(dir, { withFileTypes: true })
      .flatMap((d) =>
        d.isDirectory()
          ? walk(path.join(dir, d.name), `${prefix}${d.name}/`)
          : [`${prefix}${d.name}`],
      );
  files.push(
    ...walk(path.join(root, 'libs/agent/contracts/proto'), 'proto/'),
    ...walk(path.join(root, 'node_modules/grpc-health-check/proto'), 'proto/'),
  );
  const unique = [...new Set(files)].sort();
  const missing = unique.filter(
    (f) => !fs.statSync(path.join(bin, f), { throwIfNoEntry: false })?.isFile(),
  );
  if (missing.length > 0) {
    process.stderr.write(
      `packing the agent artifact: dist/bin lacks ${missing.join(', ')} (run \`nx run agent:artifact\`, which builds them, or \`bundle.mjs artifact --build\`)\n`,
    );
    process.exit(1);
  }
  const dirs = new Set();
  for (const f of unique) {
    for (let d = path.posix.dirname(f); d !== '.'; d = path.posix.dirname(d)) dirs.add(d);
  }
  return [
    ...[...dirs].map((d) => ({ type: 'directory', name: `${d}/` })),
    ...unique.map((f) => ({ type: 'file', name: f, from: path.join(bin, f) })),
  ].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * Writes the entries as dist/artifact/podmin-agent-v<version>.tar.gz and its `.sha512`
 * checksum file (`<hex>  <name>`, as the release publishes it beside the archive); returns
 * the archive's path. The directory is the Nx output: an earlier version's archive goes.
 */
export async function writeArtifact(entries) {
  const { pack } = require('tar-stream');
  const { gzipSync, constants } = require('node:zlib');
  const { createHash } = require('node:crypto');
  const tar = pack();
  const chunks = [];
  tar.on('data', (c) => chunks.push(c));
  const ended = new Promise((resolve, reject) => {
    tar.on('end', resolve);
    tar.on('error', reject);
  });
  const fixed = { mtime: new Date(0), uid: 0, gid: 0, uname: '', gname: '' };
  for (const e of entries) {
    if (e.type === 'directory') {
      tar.entry({ ...fixed, name: e.name, type: 'directory', mode: 0o755 });
    } else {
      const body = fs.readFileSync(e.from);
      const mode = e.name.endsWith('.cjs') ? 0o755 : 0o644;
      await new Promise((resolve, reject) =>
        tar.entry({ ...fixed, name: e.name, mode, size: body.length }, body, (err) =>
          err ? reject(err) : resolve(),
        ),
      );
    }
  }
  tar.finalize();
  await ended;
  const gz = gzipSync(Buffer.concat(chunks), { level: constants.Z_BEST_COMPRESSION });
  // zlib writes mtime 0 already; the OS byte depends on the platform zlib was built for.
  gz[9] = 3;
  const dir = path.join(root, 'dist/artifact');
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `podmin-agent-v${pkg.version}.tar.gz`);
  fs.writeFileSync(file, gz);
  const hex = createHash('sha512').update(gz).digest('hex');
  fs.writeFileSync(`${file}.sha512`, `${hex}  ${path.basename(file)}\n`);
  return file;
}
