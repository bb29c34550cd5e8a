import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { RecordingReporter } from '@podmin/cli-util-io';
import { S3ObjectStore, createS3Client, type ObjectStore } from '@podmin/data-access-object-store';
import { FakeUpstream, makeTempDir, type TempDir, emulatorBucket } from '@podmin/testing';
import {
  DEPENDENCY_MANIFEST_KEY,
  parseDependencyManifest,
  type DependencyImageEntry,
  type Nat64Kernel,
} from '@podmin/util-dependencies';
import { DownloadCache } from './download-cache';
import { DependencyResolver } from './resolver';
import { syncDependencies, type ImageMirror } from './sync';

const BUILD = '20251117-2300';
const ABI = '6.12.48+deb13';

/** Images are not this file's subject: a marker object per image. */
const images: ImageMirror = {
  resolve: (image) =>
    Promise.resolve({
      digest: `sha256:${createHash('sha256').update(image.source).digest('hex')}`,
      size: 1,
    }),
  ensurePublished: async (store, entry: DependencyImageEntry) => {
    await store.put(`${entry.path}/index.json`, entry.digest);
    return 'uploaded';
  },
};

describe('NAT64 Jool modules: Debian image kernel → jool-builds archive → bucket (S3 emulator)', () => {
  let upstream: FakeUpstream;
  let store: ObjectStore;
  let temp: TempDir;
  let reporter: RecordingReporter;
  let resolver: DependencyResolver;

  beforeEach(async () => {
    upstream = await new FakeUpstream().start();
    const { client, bucket } = await emulatorBucket('podmin-jool', createS3Client);
    store = new S3ObjectStore({ client, bucket });
    temp = await makeTempDir('podmin-jool-cache');
    reporter = new RecordingReporter();
    resolver = new DependencyResolver({ cliVersion: '0.1.0', endpoints: upstream.endpoints });
  }, 180_000);
  afterEach(async () => {
    await upstream.stop();
    await temp.cleanup();
  });

  const sync = (nat64Kernels?: Nat64Kernel[]) =>
    syncDependencies(store, ['arm64'], {
      resolver,
      cache: new DownloadCache({ dir: path.join(temp.path, 'downloads'), reporter }),
      images,
      reporter,
      ...(nat64Kernels === undefined ? {} : { nat64Kernels }),
    });

  it('reads the exact initial kernel from the dated EC2 image manifest of the AMI', async () => {
    upstream.addDebianImage(BUILD, 'arm64', `${ABI}-cloud-arm64`);
    await expect(resolver.imageKernel('arm64', `debian-13-arm64-${BUILD}`)).resolves.toEqual({
      arch: 'arm64',
      imageName: `debian-13-arm64-${BUILD}`,
      kernelRelease: `${ABI}-cloud-arm64`,
      kernelAbi: ABI,
    });
    expect(upstream.requests).toContain(
      `/debian/trixie/${BUILD}/debian-13-ec2-arm64-${BUILD}.json`,
    );
    await expect(resolver.imageKernel('arm64', 'debian-13-arm64-20251118-0000')).rejects.toThrow(
      /debian-13-ec2-arm64-20251118-0000\.json/,
    );
    await expect(resolver.imageKernel('amd64', `debian-13-arm64-${BUILD}`)).rejects.toMatchObject({
      message: expect.stringContaining('not an official Debian 13 amd64 AMI name'),
    });
  });

  it('mirrors only the matching archive, verified, and records it; a sync without NAT64 facts keeps it', async () => {
    await upstream.addJoolBuild({ joolVersion: '4.1.14', kernelAbi: ABI });
    const archives = await upstream.addJoolBuild({ joolVersion: '4.1.15', kernelAbi: ABI });
    await upstream.addJoolBuild({ joolVersion: '4.1.16', kernelAbi: '6.12.50+deb13' });
    await upstream.addJoolBuild({ joolVersion: '4.1.17', kernelAbi: ABI, draft: true });
    upstream.addDebianImage(BUILD, 'arm64', `${ABI}-cloud-arm64`);
    const kernel = await resolver.imageKernel('arm64', `debian-13-arm64-${BUILD}`);

    const result = await sync([kernel]);
    const key = `dependencies/jool/jool-v4.1.15-${ABI}-linux-arm64.tar.gz`;
    expect(result.uploaded).toContain(key);
    const body = archives[`jool-4.1.15-${ABI}-arm64.tar.gz`]!;
    const manifest = parseDependencyManifest((await store.get(DEPENDENCY_MANIFEST_KEY)).body);
    expect(manifest.dependencies['jool']).toEqual({
      arm64: {
        version: `4.1.15-${ABI}`,
        url: `${upstream.base}/gh-dl/podplane/jool-builds/jool-4.1.15-kernel-${ABI}/jool-4.1.15-${ABI}-arm64.tar.gz`,
        path: key,
        digest: `sha256:${createHash('sha256').update(body).digest('hex')}`,
        size: body.length,
      },
    });
    // Only this architecture's archive of the chosen release was downloaded.
    const joolDownloads = upstream.requests.filter((r) =>
      r.startsWith('/gh-dl/podplane/jool-builds/'),
    );
    expect(joolDownloads.sort()).toEqual([
      `/gh-dl/podplane/jool-builds/jool-4.1.15-kernel-${ABI}/SHA256SUMS`,
      `/gh-dl/podplane/jool-builds/jool-4.1.15-kernel-${ABI}/jool-4.1.15-${ABI}-arm64.tar.gz`,
    ]);
    // The mirrored bytes are the archive: a real tar lists the module files.
    const stored = await store.get(key, { maxBytes: 1024 * 1024 });
    const local = path.join(temp.path, 'mirrored.tar.gz');
    fs.writeFileSync(local, stored.body);
    expect(execFileSync('tar', ['-tzf', local], { encoding: 'utf8' }).split('\n')).toEqual(
      expect.arrayContaining(['jool.ko', 'jool_common.ko', 'jool_siit.ko', 'metadata.json']),
    );

    const carried = await sync();
    expect(carried.written).toBe(false);
    expect(carried.manifest.dependencies['jool']).toEqual(manifest.dependencies['jool']);

    const dropped = await sync([]);
    expect(dropped.written).toBe(true);
    expect(dropped.manifest.dependencies['jool']).toBeUndefined();
  }, 180_000);

  it('refuses an archive built for another kernel and writes nothing', async () => {
    await upstream.addJoolBuild({
      joolVersion: '4.1.15',
      kernelAbi: ABI,
      metadata: (arch) => ({ kernel_release: `6.12.50+deb13-cloud-${arch}` }),
    });
    upstream.addDebianImage(BUILD, 'arm64', `${ABI}-cloud-arm64`);
    const kernel = await resolver.imageKernel('arm64', `debian-13-arm64-${BUILD}`);
    await expect(sync([kernel])).rejects.toMatchObject({
      message: expect.stringContaining('checking the Jool module archive'),
      problems: [
        {
          field: 'metadata.json kernel_release',
          message: `must be ${ABI}-cloud-arm64, found "6.12.50+deb13-cloud-arm64"`,
        },
      ],
    });
    await expect(store.head(DEPENDENCY_MANIFEST_KEY)).rejects.toMatchObject({
      code: 'OBJECT_NOT_FOUND',
    });
    expect((await store.list('dependencies/')).objects).toEqual([]);
  }, 180_000);

  it('refuses an archive whose bytes do not match SHA256SUMS', async () => {
    await upstream.addJoolBuild({ joolVersion: '4.1.15', kernelAbi: ABI });
    upstream.replaceBody(
      `/gh-dl/podplane/jool-builds/jool-4.1.15-kernel-${ABI}/jool-4.1.15-${ABI}-arm64.tar.gz`,
      Buffer.from('tampered'),
    );
    upstream.addDebianImage(BUILD, 'arm64', `${ABI}-cloud-arm64`);
    const kernel = await resolver.imageKernel('arm64', `debian-13-arm64-${BUILD}`);
    await expect(sync([kernel])).rejects.toThrow(/jool/);
    await expect(store.head(DEPENDENCY_MANIFEST_KEY)).rejects.toMatchObject({
      code: 'OBJECT_NOT_FOUND',
    });
  }, 180_000);

  it('refuses a release whose SHA256SUMS disagrees with the digest GitHub records', async () => {
    await upstream.addJoolBuild({ joolVersion: '4.1.15', kernelAbi: ABI });
    upstream.replaceBody(
      `/gh-dl/podplane/jool-builds/jool-4.1.15-kernel-${ABI}/SHA256SUMS`,
      Buffer.from(`${'ab'.repeat(32)}  jool-4.1.15-${ABI}-arm64.tar.gz\n`),
    );
    upstream.addDebianImage(BUILD, 'arm64', `${ABI}-cloud-arm64`);
    const kernel = await resolver.imageKernel('arm64', `debian-13-arm64-${BUILD}`);
    await expect(sync([kernel])).rejects.toMatchObject({
      message: expect.stringContaining(
        `SHA256SUMS of jool-4.1.15-kernel-${ABI} says sha256:${'ab'.repeat(32)}`,
      ),
    });
    expect(upstream.requests.some((r) => r.endsWith('-arm64.tar.gz'))).toBe(false);
  }, 180_000);

  it('names the missing release when jool-builds has none for the kernel yet', async () => {
    await upstream.addJoolBuild({ joolVersion: '4.1.15', kernelAbi: '6.12.50+deb13' });
    upstream.addDebianImage(BUILD, 'arm64', `${ABI}-cloud-arm64`);
    const kernel = await resolver.imageKernel('arm64', `debian-13-arm64-${BUILD}`);
    await expect(sync([kernel])).rejects.toMatchObject({
      code: 'NOT_FOUND',
      message: expect.stringContaining(
        `podplane/jool-builds has no stable Jool 4 release for kernel ${ABI}-cloud-arm64`,
      ),
    });
  }, 180_000);
});
