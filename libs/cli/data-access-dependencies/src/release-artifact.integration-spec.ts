// The release build of the podmin-agent artifact (tools/release/build-agent-artifact.sh, run by
// .github/workflows/release.yml) against what `setup` does with it: the script run twice gives
// the same bytes; its archive is byte-identical to what `setup --agent-source` builds from the
// same tree; setup takes the digest from the release's own `.sha512` file and refuses an archive
// that does not match it, naming both digests. Builds in a copy of this checkout (its
// node_modules hard-linked), so the checkout's dist/ is left alone.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cp, link, mkdir, readFile, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { FakeUpstream, makeTempDir, type TempDir } from '@podmin/testing';
import { buildAgentFromSource } from './agent-source';
import { DownloadCache } from './download-cache';
import { DependencyResolver } from './resolver';

const run = promisify(execFile);
const REPO = path.resolve(__dirname, '../../../..');
// What a build needs besides node_modules; dist/, caches and VCS state stay behind.
const SKIP = new Set(['.git', '.nx', 'dist', 'node_modules', 'tmp']);

/** Hard-links every file of `from` into `to` (a build only adds files, never rewrites these). */
async function linkTree(from: string, to: string): Promise<void> {
  await mkdir(to, { recursive: true });
  for (const entry of await readdir(from, { withFileTypes: true })) {
    const [src, dst] = [path.join(from, entry.name), path.join(to, entry.name)];
    if (entry.isDirectory()) await linkTree(src, dst);
    else if (entry.isSymbolicLink()) await cp(src, dst, { verbatimSymlinks: true });
    else await link(src, dst);
  }
}

const sha512 = (bytes: Buffer) => createHash('sha512').update(bytes).digest('hex');

describe('the release build of the podmin-agent artifact', () => {
  let temp: TempDir;
  let checkout: string;
  let version: string;
  let name: string;
  /** The files of each run of the release script, by file name. */
  const runs: Array<Map<string, Buffer>> = [];

  beforeAll(async () => {
    temp = await makeTempDir('podmin-release');
    checkout = path.join(temp.path, 'checkout');
    await mkdir(checkout);
    for (const entry of await readdir(REPO)) {
      if (!SKIP.has(entry))
        await cp(path.join(REPO, entry), path.join(checkout, entry), { recursive: true });
    }
    await linkTree(path.join(REPO, 'node_modules'), path.join(checkout, 'node_modules'));
    version = (
      JSON.parse(await readFile(path.join(checkout, 'package.json'), 'utf8')) as { version: string }
    ).version;
    name = `podmin-agent-v${version}.tar.gz`;
    for (const out of ['first', 'second']) {
      const dir = path.join(temp.path, out);
      await run('bash', ['tools/release/build-agent-artifact.sh', dir], {
        cwd: checkout,
        env: { ...process.env, SOURCE_DATE_EPOCH: '1764000000' },
        maxBuffer: 16 * 1024 * 1024,
      });
      const files = new Map<string, Buffer>();
      for (const file of (await readdir(dir)).sort())
        files.set(file, await readFile(path.join(dir, file)));
      runs.push(files);
    }
  }, 300_000);

  afterAll(async () => {
    await temp?.cleanup();
  });

  it('writes the archive, its .sha512 and its SPDX SBOM, the same bytes on every run', () => {
    const [first, second] = runs;
    expect([...(first?.keys() ?? [])]).toEqual([name, `${name}.sha512`, `${name}.spdx.json`]);
    for (const [file, bytes] of first ?? []) {
      expect({ file, same: second?.get(file)?.equals(bytes) }).toEqual({ file, same: true });
    }
    const archive = first?.get(name) ?? Buffer.alloc(0);
    // gzip without a name or a time: FLG 0, MTIME 0.
    expect([archive[3], archive.readUInt32LE(4)]).toEqual([0, 0]);
    expect(first?.get(`${name}.sha512`)?.toString()).toBe(`${sha512(archive)}  ${name}\n`);
  });

  it('lists the artifact and the npm packages it bundles, with versions and SHA-512s from the lockfile', async () => {
    const sbom = JSON.parse(runs[0]?.get(`${name}.spdx.json`)?.toString() ?? '{}') as {
      spdxVersion: string;
      creationInfo: { created: string };
      packages: Array<{
        SPDXID: string;
        name: string;
        versionInfo: string;
        checksums?: Array<{ checksumValue: string }>;
      }>;
      relationships: Array<{
        spdxElementId: string;
        relationshipType: string;
        relatedSpdxElement: string;
      }>;
    };
    const lock = JSON.parse(await readFile(path.join(REPO, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { version: string; integrity?: string }>;
    };
    expect(sbom.spdxVersion).toBe('SPDX-2.3');
    expect(sbom.creationInfo.created).toBe('2025-11-24T16:00:00Z');
    const [agent, ...bundled] = sbom.packages;
    expect(agent).toMatchObject({
      name: 'podmin-agent',
      versionInfo: version,
      checksums: [
        { algorithm: 'SHA512', checksumValue: sha512(runs[0]?.get(name) ?? Buffer.alloc(0)) },
      ],
    });
    const names = new Set(bundled.map((p) => p.name));
    // The gRPC stack every service process bundles, the UDP worker's koffi, the AWS SDK clients
    // embedded into the processes that talk to AWS; no CLI-only package.
    for (const expected of [
      '@grpc/grpc-js',
      '@nestjs/core',
      'dns-packet',
      'koffi',
      'grpc-health-check',
      '@aws-sdk/client-s3',
    ])
      expect({ expected, listed: names.has(expected) }).toEqual({ expected, listed: true });
    expect(names.has('yargs')).toBe(false);
    const grpc = bundled.find((p) => p.name === '@grpc/grpc-js');
    const locked = lock.packages['node_modules/@grpc/grpc-js'];
    expect(grpc?.versionInfo).toBe(locked?.version);
    expect(grpc?.checksums?.[0]?.checksumValue).toBe(
      Buffer.from((locked?.integrity ?? '').replace(/^sha512-/, ''), 'base64').toString('hex'),
    );
    expect(sbom.relationships.filter((r) => r.relationshipType === 'CONTAINS')).toHaveLength(
      bundled.length,
    );
  });

  it('is byte-identical to what setup --agent-source builds from the same tree', async () => {
    const source = await buildAgentFromSource(checkout, version);
    const built = await readFile(fileURLToPath(source.url));
    const released = runs[0]?.get(name) ?? Buffer.alloc(0);
    expect(source.digest).toBe(`sha512:${sha512(released)}`);
    expect(built.equals(released)).toBe(true);
  }, 120_000);

  describe('setup with the published release', () => {
    let upstream: FakeUpstream;
    beforeEach(async () => {
      upstream = await new FakeUpstream().start();
    });
    afterEach(async () => {
      await upstream.stop();
      await rm(path.join(temp.path, 'downloads'), { recursive: true, force: true });
    });
    const asset = () => `/gh-dl/podplane/podmin/v${version}/${name}`;
    const resolveAgent = async () => {
      const files = await new DependencyResolver({
        cliVersion: version,
        endpoints: upstream.endpoints,
      }).resolveFiles(['amd64']);
      const agent = files.find((f) => f.name === 'podmin-agent');
      if (!agent) throw new Error('no podmin-agent in the resolved set');
      return agent;
    };
    const cache = () => new DownloadCache({ dir: path.join(temp.path, 'downloads'), attempts: 1 });

    it("downloads it with the digest of the release's own .sha512 file", async () => {
      upstream.replaceArtifact(asset(), runs[0]?.get(name) ?? Buffer.alloc(0));
      upstream.replaceBody(`${asset()}.sha512`, runs[0]?.get(`${name}.sha512`) ?? Buffer.alloc(0));
      const agent = await resolveAgent();
      expect(agent.digest).toBe(`sha512:${sha512(runs[0]?.get(name) ?? Buffer.alloc(0))}`);
      const [cached] = await cache().ensureAll([agent]);
      expect(
        (await readFile(cached?.localPath ?? '')).equals(runs[0]?.get(name) ?? Buffer.alloc(0)),
      ).toBe(true);
    });

    it('refuses an archive that differs from the published digest, naming both', async () => {
      const released = runs[0]?.get(name) ?? Buffer.alloc(0);
      upstream.replaceArtifact(asset(), released);
      upstream.replaceBody(`${asset()}.sha512`, runs[0]?.get(`${name}.sha512`) ?? Buffer.alloc(0));
      const tampered = Buffer.from(released);
      tampered[tampered.length - 100] = (tampered[tampered.length - 100] ?? 0) ^ 0xff;
      upstream.replaceBody(asset(), tampered);
      const agent = await resolveAgent();
      const err = await cache()
        .ensure(agent)
        .catch((e: unknown) => e);
      expect(err).toMatchObject({
        code: 'IO_ERROR',
        message: expect.stringContaining(
          `digest mismatch: expected sha512:${sha512(released)}, got sha512:${sha512(tampered)}`,
        ) as unknown,
      });
      await expect(readFile(cache().localPath(agent))).rejects.toMatchObject({ code: 'ENOENT' });
    });
  });
});
