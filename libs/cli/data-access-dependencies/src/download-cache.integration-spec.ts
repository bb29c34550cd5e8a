import { readFile, writeFile } from 'node:fs/promises';
import { RecordingReporter } from '@podmin/cli-util-io';
import { FakeUpstream, makeTempDir, type TempDir } from '@podmin/testing';
import { DownloadCache } from './download-cache';
import { DependencyResolver } from './resolver';

describe('DownloadCache against a loopback upstream', () => {
  let upstream: FakeUpstream;
  let temp: TempDir;
  let reporter: RecordingReporter;
  beforeEach(async () => {
    upstream = await new FakeUpstream().start();
    temp = await makeTempDir('podmin-download-cache');
    reporter = new RecordingReporter();
  });
  afterEach(async () => {
    await upstream.stop();
    await temp.cleanup();
  });

  const resolve = (archs: Array<'amd64' | 'arm64'>) =>
    new DependencyResolver({ cliVersion: '0.1.0', endpoints: upstream.endpoints }).resolveFiles(
      archs,
    );
  const cache = (concurrency = 2) =>
    new DownloadCache({ dir: `${temp.path}/downloads`, concurrency, reporter });

  it('downloads every file with bounded concurrency, then reuses valid files without a request', async () => {
    const files = await resolve(['amd64', 'arm64']);
    upstream.maxInFlight = 0; // the resolver's checksum reads are not downloads
    const first = await cache().ensureAll(files);
    expect(first).toHaveLength(files.length);
    expect(upstream.maxInFlight).toBeLessThanOrEqual(2);
    expect(upstream.maxInFlight).toBe(2);
    const kubelet = first.find((c) => c.file.name === 'kubelet' && c.file.arch === 'arm64')!;
    expect(kubelet.localPath).toBe(`${temp.path}/downloads/kubelet/kubelet-v1.36.2-linux-arm64`);
    expect(kubelet.size).toBe(200 * 1024);
    expect(reporter.progressEvents.some((e) => e.label.includes('kubelet'))).toBe(true);

    const before = upstream.requests.length;
    await cache().ensureAll(files);
    expect(upstream.requests.length).toBe(before);
  });

  it('repairs a corrupt cached file by downloading it again', async () => {
    const [containerd] = await resolve(['amd64']);
    const c = cache();
    const cached = await c.ensure(containerd!);
    await writeFile(cached.localPath, 'garbage');
    const repaired = await c.ensure(containerd!);
    expect(await readFile(repaired.localPath)).toHaveLength(64 * 1024);
    expect(reporter.infos.some((m) => m.startsWith('repairing containerd'))).toBe(true);
    expect(
      upstream.count('/gh-dl/containerd/containerd/v2.1.5/containerd-2.1.5-linux-amd64.tar.gz'),
    ).toBe(2);
  });

  it('retries a truncated download and succeeds', async () => {
    const files = await resolve(['amd64']);
    const kubelet = files.find((f) => f.name === 'kubelet')!;
    upstream.truncateNext('/k8s/release/v1.36.2/bin/linux/amd64/kubelet', 1);
    const cached = await cache().ensure(kubelet);
    expect(cached.size).toBe(200 * 1024);
    expect(upstream.count('/k8s/release/v1.36.2/bin/linux/amd64/kubelet')).toBe(2);
    expect(reporter.infos.some((m) => m.startsWith('retrying kubelet'))).toBe(true);
  });

  it('fails after every attempt when the bytes do not match the published checksum', async () => {
    const files = await resolve(['amd64']);
    const gvisor = files.find((f) => f.name === 'gvisor')!;
    upstream.replaceBody('/gvisor/20260803.0/x86_64/gvisor.tar.bz2', Buffer.from('tampered'));
    const err = await cache()
      .ensure(gvisor)
      .catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: 'IO_ERROR',
      message: expect.stringContaining('digest mismatch'),
    });
    expect(upstream.count('/gvisor/20260803.0/x86_64/gvisor.tar.bz2')).toBe(3);
    // Nothing unverified is left in the cache.
    await expect(readFile(cache().localPath(gvisor))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('rejects a download whose size differs from the size the publisher lists', async () => {
    const [containerd] = await resolve(['amd64']);
    const err = await new DownloadCache({ dir: temp.path, attempts: 1 })
      .ensure({ ...containerd!, size: 1 })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: 'IO_ERROR',
      message: expect.stringContaining('publisher lists 1'),
    });
  });
});
