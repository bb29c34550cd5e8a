import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash } from 'node:crypto';
import { RecordingReporter } from '@podmin/cli-util-io';
import { makeTempDir } from '@podmin/testing';
import type { DesiredImage } from '@podmin/util-dependencies';
import { fetchDependencies } from './fetch';

/** A minimal loopback upstream: every GitHub repository has one v1.36.0-shaped release. */
function startUpstream(): Promise<{
  base: string;
  requests: string[];
  close: () => Promise<void>;
}> {
  const requests: string[] = [];
  const body = (name: string) => Buffer.from(`content of ${name}\n`);
  const sha512 = (b: Buffer) => createHash('sha512').update(b).digest('hex');
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    requests.push(url.pathname);
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const release = /^\/gh\/repos\/(.+)\/releases$/.exec(url.pathname);
    if (release !== null) {
      const repo = release[1];
      const [tag, names] =
        repo === 'google/gvisor'
          ? ['release-20260803.0', []]
          : repo === 'podplane/podmin'
            ? ['v0.1.0', ['podmin-agent-v0.1.0.tar.gz']]
            : repo === 'containerd/containerd'
              ? ['v2.1.4', ['amd64'].map((a) => `containerd-2.1.4-linux-${a}.tar.gz`)]
              : repo === 'containernetworking/plugins'
                ? ['v1.7.1', ['cni-plugins-linux-amd64-v1.7.1.tgz']]
                : repo === 'coredns/coredns'
                  ? ['v1.12.3', ['coredns_1.12.3_linux_amd64.tgz']]
                  : repo === 'kubernetes-sigs/cri-tools'
                    ? ['v1.36.0', ['crictl-v1.36.0-linux-amd64.tar.gz']]
                    : ['v1.36.1', []];
      const assets = names.flatMap((n) => {
        const b = body(n);
        return [
          { name: n, browser_download_url: `${base}/dl/${n}`, size: b.length },
          { name: `${n}.sha512`, browser_download_url: `${base}/dl/${n}.sha512`, size: 128 },
        ];
      });
      res.end(JSON.stringify([{ tag_name: tag, draft: false, prerelease: false, assets }]));
      return;
    }
    if (url.pathname === '/reg/v2/pause/tags/list') {
      res.end(JSON.stringify({ name: 'pause', tags: ['3.9', '3.10', '3.10.1', '4.0.0-rc.1'] }));
      return;
    }
    if (url.pathname === '/node/index.json') {
      res.end(JSON.stringify([{ version: 'v24.1.0' }]));
      return;
    }
    const name = url.pathname.split('/').pop()!;
    if (url.pathname === '/node/v24.1.0/SHASUMS256.txt') {
      const n = 'node-v24.1.0-linux-x64.tar.xz';
      res.end(`${createHash('sha256').update(body(n)).digest('hex')}  ${n}\n`);
      return;
    }
    if (name.endsWith('.sha512')) {
      res.end(`${sha512(body(name.slice(0, -'.sha512'.length)))}\n`);
      return;
    }
    res.end(body(name));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        requests,
        close: () => new Promise<void>((r) => server.close(() => r())),
      }),
    ),
  );
}

const endpointsOf = (base: string) => ({
  githubApi: `${base}/gh`,
  k8sDownload: `${base}/k8s`,
  gvisorDownload: `${base}/gvisor`,
  nodeDist: `${base}/node`,
  registries: { 'registry.k8s.io': `${base}/reg` },
});

describe('fetchDependencies', () => {
  it('fills <cache>/downloads for one architecture, results on stdout, no bucket involved', async () => {
    const upstream = await startUpstream();
    const cache = await makeTempDir('podmin-fetch');
    try {
      const reporter = new RecordingReporter();
      const { files } = await fetchDependencies(
        {
          archs: ['amd64'],
          cacheDir: cache.path,
          cliVersion: '0.1.0',
          endpoints: {
            githubApi: `${upstream.base}/gh`,
            k8sDownload: `${upstream.base}/k8s`,
            gvisorDownload: `${upstream.base}/gvisor`,
            nodeDist: `${upstream.base}/node`,
          },
        },
        reporter,
      );
      expect(files.map((f) => f.name)).toEqual([
        'containerd',
        'gvisor',
        'cni-plugins',
        'kubelet',
        'crictl',
        'coredns',
        'nodejs',
        'podmin-agent',
      ]);
      expect(reporter.results).toContain(
        `kubelet\tamd64\t1.36.1\t${cache.path}/downloads/kubelet/kubelet-v1.36.1-linux-amd64`,
      );
      expect(files.every((f) => f.arch === 'amd64')).toBe(true);
      expect(files.every((f) => f.path.startsWith(`${cache.path}/downloads/`))).toBe(true);
    } finally {
      await upstream.close();
      await cache.cleanup();
    }
  });

  it('resolves each dependency image into the local image store through the images port', async () => {
    const upstream = await startUpstream();
    const cache = await makeTempDir('podmin-fetch-images');
    try {
      const reporter = new RecordingReporter();
      /** Hand-written `resolve` fake: records the images asked for, answers a fixed digest. */
      const resolved: DesiredImage[] = [];
      const images = {
        resolve: (image: DesiredImage) => {
          resolved.push(image);
          return Promise.resolve({ digest: `sha256:${'a'.repeat(64)}`, size: 1234 });
        },
      };
      await fetchDependencies(
        {
          archs: ['amd64'],
          cacheDir: cache.path,
          cliVersion: '0.1.0',
          endpoints: endpointsOf(upstream.base),
          images,
        },
        reporter,
      );
      expect(resolved).toEqual([
        {
          name: 'pause',
          version: '3.10.1',
          source: 'registry.k8s.io/pause:3.10.1',
          path: 'mirror/registry.k8s.io/pause',
        },
      ]);
      expect(reporter.results.at(-1)).toBe(
        `pause\timage\t3.10.1\tregistry.k8s.io/pause:3.10.1@sha256:${'a'.repeat(64)}`,
      );
      expect(upstream.requests.filter((r) => r.startsWith('/reg/'))).toEqual([
        '/reg/v2/pause/tags/list',
      ]);
    } finally {
      await upstream.close();
      await cache.cleanup();
    }
  });
});
