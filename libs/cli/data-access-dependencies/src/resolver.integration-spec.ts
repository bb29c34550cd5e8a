import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { FILE_DEPENDENCY_NAMES } from '@podmin/util-dependencies';
import { artifact, FakeUpstream } from '@podmin/testing';
import { releaseEndpointsUnder } from './release-endpoints';
import { DependencyResolver } from './resolver';

const sha = (algorithm: 'sha256' | 'sha512', label: string, bytes?: number) =>
  `${algorithm}:${createHash(algorithm).update(artifact(label, bytes)).digest('hex')}`;

describe('DependencyResolver against a loopback upstream', () => {
  let upstream: FakeUpstream;
  beforeEach(async () => {
    upstream = await new FakeUpstream().start();
  });
  afterEach(() => upstream.stop());

  it('maps the test base URL onto every upstream the loopback server serves', async () => {
    expect(releaseEndpointsUnder(`${upstream.base}/`)).toEqual(upstream.endpoints);
    const resolver = new DependencyResolver({
      cliVersion: '0.1.0',
      endpoints: releaseEndpointsUnder(upstream.base),
    });
    const files = await resolver.resolveFiles(['arm64']);
    expect(files.map((f) => f.url).every((u) => u.startsWith(`${upstream.base}/`))).toBe(true);
    expect((await resolver.resolveImages())[0]?.source).toBe('registry.k8s.io/pause:3.10.1');
  });

  it('resolves the complete set: greatest stable version per pin, strongest digest, exact sizes', async () => {
    const resolver = new DependencyResolver({ cliVersion: '0.1.0', endpoints: upstream.endpoints });
    const files = await resolver.resolveFiles(['amd64', 'arm64']);
    expect(files.map((f) => `${f.name}/${f.arch}`)).toEqual(
      FILE_DEPENDENCY_NAMES.flatMap((n) => [`${n}/amd64`, `${n}/arm64`]),
    );
    const byKey = new Map(files.map((f) => [`${f.name}/${f.arch}`, f]));

    // containerd: prerelease, draft and other majors rejected; only sha256sum published.
    expect(byKey.get('containerd/arm64')).toEqual({
      name: 'containerd',
      arch: 'arm64',
      version: '2.1.5',
      url: `${upstream.base}/gh-dl/containerd/containerd/v2.1.5/containerd-2.1.5-linux-arm64.tar.gz`,
      path: 'dependencies/containerd/containerd-v2.1.5-linux-arm64.tar.gz',
      digest: sha('sha256', 'containerd-2.1.5-arm64'),
      size: 64 * 1024,
    });
    // CNI publishes sha1, sha256 and sha512: SHA-512 wins.
    expect(byKey.get('cni-plugins/amd64')?.digest).toBe(sha('sha512', 'cni-amd64'));
    // kubelet: 1.36 pinned, found on the second page, SHA-512 from dl.k8s.io, size unknown.
    const kubelet = byKey.get('kubelet/amd64');
    expect(kubelet).toMatchObject({
      version: '1.36.2',
      url: `${upstream.base}/k8s/release/v1.36.2/bin/linux/amd64/kubelet`,
      path: 'dependencies/kubelet/kubelet-v1.36.2-linux-amd64',
      digest: sha('sha512', 'kubelet-1.36.2-amd64', 200 * 1024),
    });
    expect(kubelet?.size).toBeUndefined();
    expect(byKey.get('crictl/arm64')).toMatchObject({
      version: '1.36.0',
      digest: sha('sha256', 'crictl-1.36-arm64'),
    });
    expect(byKey.get('coredns/amd64')?.version).toBe('1.12.3');
    expect(byKey.get('gvisor/arm64')).toMatchObject({
      version: '20260803.0',
      url: `${upstream.base}/gvisor/20260803.0/aarch64/gvisor.tar.bz2`,
      path: 'dependencies/gvisor/gvisor-v20260803.0-linux-arm64.tar.bz2',
      digest: sha('sha512', 'gvisor-20260803.0-aarch64'),
    });
    expect(byKey.get('nodejs/amd64')).toMatchObject({
      version: '24.11.1',
      url: `${upstream.base}/node/v24.11.1/node-v24.11.1-linux-x64.tar.xz`,
      digest: sha('sha256', 'node-x64'),
    });
    // The agent matches the CLI version, not the newest release.
    expect(byKey.get('podmin-agent/arm64')).toMatchObject({
      version: '0.1.0',
      path: 'dependencies/podmin-agent/podmin-agent-v0.1.0-linux-arm64.tar.gz',
      digest: sha('sha512', 'agent-0.1.0'),
    });
    // One listing per repository however many architectures.
    expect(upstream.count('/gh/repos/containerd/containerd/releases')).toBe(1);

    expect(await resolver.resolveImages()).toEqual([
      {
        name: 'pause',
        version: '3.10.1',
        source: 'registry.k8s.io/pause:3.10.1',
        path: 'mirror/registry.k8s.io/pause',
      },
    ]);
  });

  it('resolves the --otel-logs packages from the real-format Packages indexes, per architecture', async () => {
    const resolver = new DependencyResolver({ cliVersion: '0.1.0', endpoints: upstream.endpoints });
    const files = await resolver.resolveOtelLogs(['amd64', 'arm64']);
    // Install order: libpq5 before Fluent Bit.
    expect(files.map((f) => `${f.name}/${f.arch}`)).toEqual([
      'libpq5/amd64',
      'libpq5/arm64',
      'fluent-bit/amd64',
      'fluent-bit/arm64',
    ]);
    const deb = (label: string) => artifact(label);
    // Fluent Bit: 4.x, the 5.0.0~rc1 pre-release and 6.0.0 rejected; 5.0.10 > 5.0.2 by dpkg
    // ordering; SHA-512 from the index; read from the uncompressed Packages (no .gz published).
    expect(files[3]).toEqual({
      name: 'fluent-bit',
      arch: 'arm64',
      version: '5.0.10',
      url: `${upstream.base}/fluentbit/pool/main/f/fluent-bit/fluent-bit_5.0.10_arm64.deb`,
      path: 'dependencies/fluent-bit/fluent-bit-v5.0.10-linux-arm64.deb',
      digest: `sha512:${createHash('sha512').update(deb('fluent-bit-5.0.10-arm64')).digest('hex')}`,
      size: 64 * 1024,
    });
    // libpq5: Debian's current version among the archive's other packages, SHA-256 (all that
    // Debian lists), read from Packages.gz.
    expect(files[0]).toEqual({
      name: 'libpq5',
      arch: 'amd64',
      version: '17.6-0+deb13u1',
      url: `${upstream.base}/debian-archive/pool/main/p/postgresql-17/libpq5_17.6-0+deb13u1_amd64.deb`,
      path: 'dependencies/libpq5/libpq5-v17.6-0+deb13u1-linux-amd64.deb',
      digest: sha('sha256', 'libpq5-17.6-0+deb13u1-amd64'),
      size: 64 * 1024,
    });
    expect(upstream.count('/fluentbit/dists/trixie/main/binary-amd64/Packages.gz')).toBe(1);
    expect(upstream.count('/fluentbit/dists/trixie/main/binary-amd64/Packages')).toBe(1);
    expect(upstream.count('/debian-archive/dists/trixie/main/binary-arm64/Packages.gz')).toBe(1);
    expect(upstream.count('/debian-archive/dists/trixie/main/binary-arm64/Packages')).toBe(0);
  });

  it('takes an epoch-versioned greater release and records it without the epoch', async () => {
    upstream.addDebPackage('fluentbit', {
      package: 'fluent-bit',
      version: '1:5.0.1',
      architecture: 'amd64',
    });
    const resolver = new DependencyResolver({ cliVersion: '0.1.0', endpoints: upstream.endpoints });
    const [, fluentBit] = await resolver.resolveOtelLogs(['amd64']);
    expect(fluentBit).toMatchObject({
      version: '5.0.1',
      url: `${upstream.base}/fluentbit/pool/main/f/fluent-bit/fluent-bit_5.0.1_amd64.deb`,
      path: 'dependencies/fluent-bit/fluent-bit-v5.0.1-linux-amd64.deb',
    });
  });

  it('refuses a Fluent Bit record without SHA-512 and an index without a stable 5.x', async () => {
    upstream.addDebPackage('fluentbit', {
      package: 'fluent-bit',
      version: '5.1.0',
      architecture: 'arm64',
      sha512: false,
    });
    const resolver = new DependencyResolver({ cliVersion: '0.1.0', endpoints: upstream.endpoints });
    await expect(resolver.resolveOtelLogs(['arm64'])).rejects.toMatchObject({
      code: 'NOT_FOUND',
      message: expect.stringContaining(
        '/fluentbit/dists/trixie/main/binary-arm64/Packages lists fluent-bit 5.1.0 without its SHA512 digest',
      ),
    });
    const empty = await new FakeUpstream().start();
    try {
      empty.replaceBody(
        '/fluentbit/dists/trixie/main/binary-amd64/Packages',
        Buffer.from(
          'Package: fluent-bit\nVersion: 6.0.0\nArchitecture: amd64\nFilename: pool/main/f/fluent-bit/fluent-bit_6.0.0_amd64.deb\nSize: 1\n',
        ),
      );
      const other = new DependencyResolver({ cliVersion: '0.1.0', endpoints: empty.endpoints });
      await expect(other.resolveOtelLogs(['amd64'])).rejects.toMatchObject({
        code: 'NOT_FOUND',
        message: expect.stringContaining('lists no stable fluent-bit 5.x for amd64'),
      });
    } finally {
      await empty.stop();
    }
  });

  it('refuses a corrupt or malformed index, naming it and the line', async () => {
    const index = '/debian-archive/dists/trixie/main/binary-amd64/Packages.gz';
    upstream.replaceBody(index, Buffer.from('not gzip'));
    const resolver = () =>
      new DependencyResolver({ cliVersion: '0.1.0', endpoints: upstream.endpoints });
    await expect(resolver().resolveOtelLogs(['amd64'])).rejects.toMatchObject({
      code: 'IO_ERROR',
      message: expect.stringContaining(`${index}: not a gzip stream`),
    });
    upstream.replaceBody(index, gzipSync(Buffer.from('Package: libpq5\nSize: 1\nsize: 2\n')));
    await expect(resolver().resolveOtelLogs(['amd64'])).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining(`${index}: line 3: field size appears twice`),
    });
    upstream.replaceBody(index, gzipSync(Buffer.from('Package: libpq5\n')));
    await expect(resolver().resolveOtelLogs(['amd64'])).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining('line 1: the stanza of libpq5 has no Version field'),
    });
  });

  it('fails clearly when no release matches the CLI version, with the --agent-source hint', async () => {
    const resolver = new DependencyResolver({ cliVersion: '9.9.9', endpoints: upstream.endpoints });
    await expect(resolver.resolveFiles(['amd64'])).rejects.toMatchObject({
      code: 'NOT_FOUND',
      hint: expect.stringContaining('--agent-source'),
    });
  });

  it('rejects a malformed checksum file', async () => {
    upstream.replaceBody(
      '/k8s/release/v1.36.2/bin/linux/amd64/kubelet.sha512',
      Buffer.from('not-a-digest\n'),
    );
    const resolver = new DependencyResolver({ cliVersion: '0.1.0', endpoints: upstream.endpoints });
    await expect(resolver.resolveFiles(['amd64'])).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining('kubelet.sha512'),
    });
  });

  it('reports an unreachable upstream as IO_ERROR', async () => {
    const resolver = new DependencyResolver({
      cliVersion: '0.1.0',
      endpoints: { ...upstream.endpoints, githubApi: 'http://127.0.0.1:1' },
    });
    await expect(resolver.resolveFiles(['amd64'])).rejects.toMatchObject({ code: 'IO_ERROR' });
  });
});
