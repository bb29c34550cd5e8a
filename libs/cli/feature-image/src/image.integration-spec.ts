import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { LocalImageStore } from '@podmin/cli-data-access-image-store';
import type { ObjectStore } from '@podmin/data-access-object-store';
import { makeTempDir } from '@podmin/testing';
import type { TempDir } from '@podmin/testing';
import { PodminError } from '@podmin/util-errors';
import {
  REF_NAME_ANNOTATION,
  blobPath,
  parseImageConfig,
  parseImageIndex,
  parseImageManifest,
} from '@podmin/util-oci';
import { QuietReporter } from './__fixtures__/quiet-reporter';
import { readLayer, startRegistryProcess } from './__fixtures__/registry-process';
import type { RegistryProcess } from './__fixtures__/registry-process';
import { testBuckets, type TestBucket } from './__fixtures__/test-buckets';
import { buildImage } from './build/build-image';
import type { BuildResult } from './build/build-image';
import type { ImageDeps } from './image-deps';
import { pullImage } from './pull';
import { pushImage } from './push';
import { RegistryClient } from './registry/registry-client';

const run = promisify(execFile);
const FIXTURE = path.join(__dirname, '__fixtures__', 'hello-app');

const buckets = testBuckets('images');

describe('build → push → registry → skopeo / pull', () => {
  let work: TempDir;
  let deps: ImageDeps;
  let built: BuildResult;

  beforeAll(async () => {
    work = await makeTempDir('podmin-image-it');
    deps = {
      store: new LocalImageStore(path.join(work.path, 'oci')),
      registry: new RegistryClient(),
      reporter: new QuietReporter(),
    };
    built = await buildImage(deps, {
      context: FIXTURE,
      tags: ['hello:v1'],
      platforms: ['linux/amd64,linux/arm64'],
      hostPlatform: { os: 'linux', architecture: 'amd64' },
    });
  });
  afterAll(() => work.cleanup());

  describe.each(buckets)('through a %s bucket', (kind, makeBucket) => {
    let bucket: TestBucket;
    let registry: RegistryProcess;

    beforeAll(async () => {
      bucket = await makeBucket();
      const pushed = await pushImage(deps, bucket.objects, { source: 'hello:v1' });
      expect(pushed).toMatchObject({
        registry: 'registry.podmin.internal',
        repository: 'apps/hello',
        tag: 'v1',
      });
      registry = await startRegistryProcess(bucket.registryFlags, bucket.registryEnv);
    }, 120_000);
    afterAll(async () => {
      await registry?.stop();
      await bucket?.cleanup();
    });

    it('serves what the Containerfile said to skopeo, for both platforms', async () => {
      const dest = path.join(work.path, `skopeo-${kind.replace(/\W/g, '-')}`);
      const copy = await run('skopeo', [
        '--insecure-policy',
        'copy',
        '--all',
        '--src-tls-verify=false',
        `docker://${registry.host}/apps/hello:v1`,
        `oci:${dest}:v1`,
      ]);
      expect(copy.stderr).toBe('');
      const layout = parseImageIndex(await readFile(path.join(dest, 'index.json')));
      expect(layout.manifests.map((d) => d.digest)).toEqual([built.index.digest]);
      const blob = (digest: string) => readFile(path.join(dest, blobPath(digest)));
      const index = parseImageIndex(await blob(built.index.digest));
      for (const arch of ['amd64', 'arm64']) {
        const entry = index.manifests.find((d) => d.platform?.architecture === arch)!;
        const manifest = parseImageManifest(await blob(entry.digest));
        const config = parseImageConfig(await blob(manifest.config.digest));
        expect(config).toMatchObject({ architecture: arch, os: 'linux' });
        expect(config.config).toEqual({
          User: '65532:65532',
          Env: ['APP_HOME=/srv/hello', 'GREETING=hello world'],
          WorkingDir: '/srv/hello',
          Entrypoint: ['/usr/local/bin/hello'],
          Cmd: ['--listen', ':8080'],
          Labels: {
            'org.opencontainers.image.title': 'hello',
            'org.opencontainers.image.version': '1.2.3',
          },
          ExposedPorts: { '8080/tcp': {}, '9090/tcp': {} },
        });
        expect(manifest.layers).toHaveLength(3);
        const [bin, site, conf] = await Promise.all(
          manifest.layers.map(async (l) => readLayer(await blob(l.digest))),
        );
        expect(bin!.get('usr/local/bin/hello')).toEqual({
          type: 'file',
          mode: 0o755,
          uid: 65532,
          gid: 65532,
          body: `#!/bin/sh\necho hello from ${arch}\n`,
        });
        expect(bin!.get('usr/local/bin/')).toMatchObject({
          type: 'directory',
          mode: 0o755,
          uid: 0,
        });
        expect(site!.get('srv/hello/site/index.html')).toMatchObject({
          uid: 65532,
          gid: 65532,
          body: '<h1>hello</h1>\n',
        });
        expect(site!.get('srv/hello/site/css/app.css')?.body).toBe(
          await readFile(path.join(FIXTURE, 'site/css/app.css'), 'utf8'),
        );
        expect([...conf!.keys()]).toEqual(['etc/', 'etc/hello/', 'etc/hello/app.yaml']);
        expect(conf!.get('etc/hello/app.yaml')).toMatchObject({
          uid: 0,
          gid: 0,
          body: 'greeting: hello\n',
        });
      }
    });

    it('lets podmin pull the image back through the registry, and repairs a corrupt cached blob', async () => {
      const store = new LocalImageStore(path.join(work.path, `pulled-${kind.replace(/\W/g, '-')}`));
      const reporter = new QuietReporter();
      const pullDeps = { store, registry: new RegistryClient(), reporter };
      const pulled = await pullImage(pullDeps, `${registry.host}/apps/hello:v1`);
      expect(pulled.descriptor.digest).toBe(built.index.digest);
      const resolved = await store.resolve(pulled.reference);
      expect(resolved?.digest).toBe(built.index.digest);
      const layer = parseImageManifest(
        await store.readBlob(pulled.repository, built.manifests[0]!.digest, { maxBytes: 1 << 20 }),
      ).layers[0]!;
      await writeFile(store.blobFile(pulled.repository, layer.digest), 'tampered');
      expect(await store.blobState(pulled.repository, layer.digest, layer.size)).toBe('corrupt');
      reporter.progressEvents.length = 0;
      await pullImage(pullDeps, `${registry.host}/apps/hello:v1`);
      // Progress in bytes: the repaired layer's bytes arrive as they stream, ending at the total.
      const total = reporter.progressEvents[0]?.total ?? 0;
      expect(total).toBeGreaterThanOrEqual(layer.size);
      expect(reporter.progressEvents.at(-1)).toMatchObject({ done: total, unit: 'bytes' });
      expect(reporter.warnings.join('\n')).toContain(
        `${layer.digest} in the image store is corrupt`,
      );
      expect(await store.blobState(pulled.repository, layer.digest, layer.size)).toBe('present');
    });

    it('keeps every tag when eight pushes to one repository race', async () => {
      const tags = Array.from({ length: 8 }, (_, i) => `t${i}`);
      await Promise.all(
        tags.map((tag) =>
          pushImage(deps, bucket.objects, { source: 'hello:v1', destination: `race:${tag}` }),
        ),
      );
      const index = parseImageIndex(await bucket.read('apps/race/index.json'));
      expect(
        index.manifests.map((d) => d.annotations?.[REF_NAME_ANNOTATION]).filter(Boolean),
      ).toEqual(tags);
      const head = await fetch(`http://${registry.host}/v2/apps/race/manifests/t7`, {
        method: 'HEAD',
      });
      expect(head.headers.get('docker-content-digest')).toBe(built.index.digest);
    });

    it('leaves no visible change when a push fails after uploading its blobs', async () => {
      const before = await bucket.read('apps/hello/index.json');
      const failing: ObjectStore = {
        ...bucket.objects,
        get: (key, options) => bucket.objects.get(key, options),
        head: (key) => bucket.objects.head(key),
        put: (key, body) => bucket.objects.put(key, body),
        putIfAbsent: (key, body) => bucket.objects.putIfAbsent(key, body),
        putIfMatch: () =>
          Promise.reject(new PodminError('BUCKET_UNAVAILABLE', 'injected failure after the blobs')),
      };
      await expect(
        pushImage(deps, failing, { source: 'hello:v1', destination: 'hello:interrupted' }),
      ).rejects.toThrow(/injected failure/);
      expect(await bucket.read('apps/hello/index.json')).toEqual(before);
      const response = await fetch(`http://${registry.host}/v2/apps/hello/manifests/interrupted`);
      expect(response.status).toBe(404);
    });
  });

  describe('pull with bearer-token auth', () => {
    let bucket: TestBucket;
    let registry: RegistryProcess;
    let front: http.Server;
    let frontHost: string;
    const requests: string[] = [];

    beforeAll(async () => {
      bucket = await buckets[0]![1]();
      await pushImage(deps, bucket.objects, { source: 'hello:v1' });
      registry = await startRegistryProcess(bucket.registryFlags);
      // A token-protected front for the registry: 401 + WWW-Authenticate until a token is shown.
      front = http.createServer((req, res) => {
        const url = req.url ?? '/';
        requests.push(`${req.method} ${url.split('?')[0]} ${req.headers.authorization ?? '-'}`);
        if (url.startsWith('/token')) {
          const params = new URL(url, 'http://x').searchParams;
          res.setHeader('content-type', 'application/json');
          res.end(JSON.stringify({ token: `tok:${params.get('service')}:${params.get('scope')}` }));
          return;
        }
        if (req.headers.authorization !== 'Bearer tok:test-registry:repository:apps/hello:pull') {
          res.statusCode = 401;
          res.setHeader(
            'www-authenticate',
            `Bearer realm="http://${frontHost}/token",service="test-registry",scope="repository:apps/hello:pull"`,
          );
          res.end('{"errors":[{"code":"UNAUTHORIZED","message":"token required"}]}');
          return;
        }
        void fetch(`http://${registry.host}${url}`, {
          method: req.method ?? 'GET',
          headers: { accept: req.headers.accept ?? '*/*' },
        }).then(
          (upstream) => {
            res.statusCode = upstream.status;
            upstream.headers.forEach((value, key) => res.setHeader(key, value));
            if (upstream.body === null) res.end();
            else Readable.fromWeb(upstream.body as never).pipe(res);
          },
          () => res.destroy(),
        );
      });
      await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
      frontHost = `127.0.0.1:${(front.address() as AddressInfo).port}`;
    }, 60_000);
    afterAll(async () => {
      await new Promise((resolve) => front?.close(resolve));
      await registry?.stop();
      await bucket?.cleanup();
    });

    it('answers the 401 challenge with an anonymous token and imports every platform', async () => {
      const store = new LocalImageStore(path.join(work.path, 'pulled-token'));
      const pulled = await pullImage(
        { store, registry: new RegistryClient(), reporter: new QuietReporter() },
        `${frontHost}/apps/hello:v1`,
      );
      expect(pulled.descriptor.digest).toBe(built.index.digest);
      expect(requests[0]).toMatch(/^GET \/v2\/apps\/hello\/manifests\/v1 -$/);
      expect(requests[1]).toBe('GET /token -');
      expect(requests.filter((r) => r.startsWith('GET /token'))).toHaveLength(1);
      for (const manifest of built.manifests) {
        expect(await store.blobState(pulled.repository, manifest.digest, manifest.size)).toBe(
          'present',
        );
      }
    });
  });
});
