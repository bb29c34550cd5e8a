#!/usr/bin/env node
// Writes the SPDX 2.3 SBOM (JSON) of a podmin-agent artifact: the artifact itself and every npm
// package it bundles, with the version, download location, SHA-512 and declared licence the
// npm lockfile records. Offline: it reads only the checkout.
//
//   node tools/release/agent-sbom.mjs ARCHIVE OUT.spdx.json
//
// What counts as bundled is what the bundler says it read: for every program in the archive
// (`*.cjs`), its esbuild metafile in dist/bin (`<program>.meta.json`, and
// `<program>.aws-sdk.meta.json` for the AWS SDK clients embedded into it), plus the packages the
// archive carries files of (koffi's native modules, grpc-health-check's .proto). A program
// without its metafile fails the run rather than leaving the SBOM short. Deterministic: no
// clock (the creation time is SOURCE_DATE_EPOCH, 0 without it), packages and relationships
// sorted, so one checkout gives the same bytes.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';

const root = path.resolve(import.meta.dirname, '../..');
const [archive, out] = process.argv.slice(2);
if (!archive || !out) {
  process.stderr.write('usage: agent-sbom.mjs ARCHIVE OUT.spdx.json\n');
  process.exit(2);
}
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const lock = JSON.parse(fs.readFileSync(path.join(root, 'package-lock.json'), 'utf8'));
const bin = path.join(root, 'dist/bin');
const fail = (why) => {
  process.stderr.write(`agent-sbom.mjs: ${why}\n`);
  process.exit(1);
};

/** The entry names of a gzip'd ustar archive (the bundler writes plain ustar, no extensions). */
function archiveEntries(bytes) {
  const tar = gunzipSync(bytes);
  const names = [];
  for (let at = 0; at + 512 <= tar.length;) {
    const header = tar.subarray(at, at + 512);
    if (header.every((b) => b === 0)) break;
    const field = (from, len) =>
      header
        .subarray(from, from + len)
        .toString('latin1')
        .replace(/\0.*$/s, '');
    const name = field(0, 100);
    const prefix = field(345, 155);
    const size = parseInt(field(124, 12).trim() || '0', 8);
    names.push(prefix ? `${prefix}/${name}` : name);
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return names;
}

const archiveBytes = fs.readFileSync(archive);
const entries = archiveEntries(archiveBytes);
const programs = entries.filter((e) => e.endsWith('.cjs'));
if (programs.length === 0) fail(`${archive} holds no program (*.cjs)`);

// Lockfile keys (node_modules/…, nested ones included) of every package a program bundled.
const PACKAGE_PATH = /^((?:node_modules\/(?:@[^/]+\/)?[^/]+\/)+)/;
const keys = new Set();
for (const program of programs) {
  const metas = [`${program}.meta.json`, `${program}.aws-sdk.meta.json`];
  const first = path.join(bin, metas[0]);
  if (!fs.existsSync(first))
    fail(`${first} is missing: build with \`bundle.mjs artifact --build\``);
  for (const meta of metas) {
    const file = path.join(bin, meta);
    if (!fs.existsSync(file)) continue;
    for (const input of Object.keys(JSON.parse(fs.readFileSync(file, 'utf8')).inputs)) {
      const match = PACKAGE_PATH.exec(input);
      if (match) keys.add(match[1].slice(0, -1));
    }
  }
}
// Files the archive carries from packages rather than from a bundle.
if (entries.some((e) => e.startsWith('koffi/'))) keys.add('node_modules/koffi');
if (entries.some((e) => e.startsWith('proto/health/'))) keys.add('node_modules/grpc-health-check');

const nameOf = (key) => key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length);
const spdxId = (s) => s.replace(/[^A-Za-z0-9.-]/g, '-');
// A declared licence SPDX can take as an expression; anything else is not asserted.
const licenceOf = (l) =>
  typeof l === 'string' && /^[A-Za-z0-9.+\-() ]+$/.test(l) && !/^SEE LICEN[CS]E/i.test(l)
    ? l
    : 'NOASSERTION';
const sha512Hex = (integrity) => {
  const sri = (integrity ?? '').split(/\s+/).find((s) => s.startsWith('sha512-'));
  return sri ? Buffer.from(sri.slice('sha512-'.length), 'base64').toString('hex') : undefined;
};

const byId = new Map();
for (const key of keys) {
  const entry = lock.packages?.[key];
  if (!entry?.version) fail(`package-lock.json has no version for ${key}`);
  const name = entry.name ?? nameOf(key);
  const id = `SPDXRef-npm-${spdxId(name.replace(/^@/, ''))}-${spdxId(entry.version)}`;
  if (byId.has(id)) continue;
  const checksum = sha512Hex(entry.integrity);
  byId.set(id, {
    SPDXID: id,
    name,
    versionInfo: entry.version,
    // The lockfile omits `resolved` for the default registry; npm ci fetches this URL then.
    downloadLocation:
      entry.resolved ??
      `https://registry.npmjs.org/${name}/-/${name.slice(name.lastIndexOf('/') + 1)}-${entry.version}.tgz`,
    filesAnalyzed: false,
    ...(checksum ? { checksums: [{ algorithm: 'SHA512', checksumValue: checksum }] } : {}),
    licenseConcluded: 'NOASSERTION',
    licenseDeclared: licenceOf(entry.license),
    copyrightText: 'NOASSERTION',
    externalRefs: [
      {
        referenceCategory: 'PACKAGE-MANAGER',
        referenceType: 'purl',
        referenceLocator: `pkg:npm/${name.replace(/^@/, '%40')}@${entry.version}`,
      },
    ],
  });
}

const file = path.basename(archive);
const digest = createHash('sha512').update(archiveBytes).digest('hex');
const release = `https://github.com/podplane/podmin/releases/download/v${pkg.version}`;
const epoch = Number(process.env.SOURCE_DATE_EPOCH ?? '0');
if (!Number.isInteger(epoch) || epoch < 0)
  fail(`SOURCE_DATE_EPOCH=${process.env.SOURCE_DATE_EPOCH} is not a Unix time`);
const dependencies = [...byId.values()].sort((a, b) =>
  a.SPDXID < b.SPDXID ? -1 : a.SPDXID > b.SPDXID ? 1 : 0,
);
const agent = 'SPDXRef-Package-podmin-agent';
const document = {
  spdxVersion: 'SPDX-2.3',
  dataLicense: 'CC0-1.0',
  SPDXID: 'SPDXRef-DOCUMENT',
  name: file.replace(/\.tar\.gz$/, ''),
  // Unique per artifact and still reproducible: named after the artifact's digest.
  documentNamespace: `${release}/${file}.spdx.json#sha512-${digest.slice(0, 32)}`,
  creationInfo: {
    created: new Date(epoch * 1000).toISOString().replace(/\.000Z$/, 'Z'),
    creators: ['Tool: podmin-tools-release-agent-sbom'],
  },
  packages: [
    {
      SPDXID: agent,
      name: 'podmin-agent',
      versionInfo: pkg.version,
      packageFileName: file,
      downloadLocation: `${release}/${file}`,
      filesAnalyzed: false,
      checksums: [{ algorithm: 'SHA512', checksumValue: digest }],
      licenseConcluded: 'NOASSERTION',
      licenseDeclared: licenceOf(pkg.license),
      copyrightText: 'NOASSERTION',
      primaryPackagePurpose: 'ARCHIVE',
    },
    ...dependencies,
  ],
  relationships: [
    { spdxElementId: 'SPDXRef-DOCUMENT', relationshipType: 'DESCRIBES', relatedSpdxElement: agent },
    ...dependencies.map((d) => ({
      spdxElementId: agent,
      relationshipType: 'CONTAINS',
      relatedSpdxElement: d.SPDXID,
    })),
  ],
};
fs.writeFileSync(out, `${JSON.stringify(document, null, 2)}\n`);
process.stdout.write(
  `wrote ${path.relative(process.cwd(), out)} (${dependencies.length} npm packages)\n`,
);
