import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { PODMIN_BIN, makeSandbox } from './cli-harness';
import type { CliSandbox } from './cli-harness';

const FIXTURE = path.resolve(
  __dirname,
  '../../../../libs/cli/feature-image/src/__fixtures__/hello-app',
);

describe('podmin build and push (bundled CLI, local bucket)', () => {
  let sandbox: CliSandbox;
  let bucket: string;
  /** The OCI layout `podmin build -t hello:v1` writes into the sandbox's cache. */
  const helloLayout = (): string =>
    path.join(sandbox.cacheHome, 'podmin', 'oci', 'registry.podmin.internal', 'apps', 'hello');

  beforeAll(async () => {
    sandbox = makeSandbox();
    bucket = path.join(sandbox.dataHome, 'podmin', 'buckets', 'demo');
    const connected = await sandbox.run(['connect', 'demo', '--provider', 'local']);
    expect(connected.code).toBe(0);
  });
  afterAll(() => sandbox.cleanup());

  it('builds without a context, pushes with one, and prints only references on stdout', async () => {
    const build = await sandbox.run([
      'build',
      FIXTURE,
      '-t',
      'hello:v1',
      '--platform',
      'linux/amd64,linux/arm64',
    ]);
    expect(build.stderr).toContain('Tagged registry.podmin.internal/apps/hello:v1');
    expect(build.stdout).toBe('registry.podmin.internal/apps/hello:v1\n');
    expect(build.code).toBe(0);
    const layout = helloLayout();
    expect(fs.readFileSync(path.join(layout, 'oci-layout'), 'utf8')).toBe(
      '{"imageLayoutVersion":"1.0.0"}',
    );

    const push = await sandbox.run(['push', 'hello:v1']);
    expect(push.stdout).toBe('registry.podmin.internal/apps/hello:v1\n');
    // Without a TTY: plain progress lines in bytes, the first and the last.
    expect(push.stderr).toMatch(
      /^Pushing registry.podmin.internal\/apps\/hello:v1: 0 B of [\d.]+ (B|KiB|MiB) \(0%\), -, -$/m,
    );
    expect(push.stderr).toMatch(
      /^Pushing registry.podmin.internal\/apps\/hello:v1: ([\d.]+ (B|KiB|MiB)) of \1 \(100%\), .*, done in \d+ s$/m,
    );
    expect(push.code).toBe(0);
    const index = JSON.parse(
      fs.readFileSync(path.join(bucket, 'apps/hello/index.json'), 'utf8'),
    ) as {
      manifests: Array<{
        annotations?: Record<string, string>;
        platform?: { architecture: string };
      }>;
    };
    expect(index.manifests[0]?.annotations?.['org.opencontainers.image.ref.name']).toBe('v1');
    expect(
      index.manifests
        .slice(1)
        .map((m) => m.platform?.architecture)
        .sort(),
    ).toEqual(['amd64', 'arm64']);

    const renamed = await sandbox.run(['push', 'hello:v1', 'web:prod']);
    expect(renamed.stdout).toBe('registry.podmin.internal/apps/web:prod\n');
  });

  it('push prints exactly what --image resolves the same shorthand to (issue 31)', async () => {
    const push = await sandbox.run(['push', 'hello:v1', 'web']);
    expect(push.stdout).toBe('registry.podmin.internal/apps/web:latest\n');
    expect(push.code).toBe(0);
    const deploy = await sandbox.run(['deploy', 'web', '-g', 'default', '--image', 'web']);
    expect(deploy.code).toBe(0);
    const index = JSON.parse(
      fs.readFileSync(path.join(bucket, 'deployments/index.json'), 'utf8'),
    ) as Record<string, { pod: string }>;
    const pod = fs.readFileSync(path.join(bucket, index['default/web']!.pod), 'utf8');
    // Deploy pins it by digest (issue 34) and keeps the reference push printed as its tag.
    expect(pod).toContain(`"web":"${push.stdout.trim()}"`);
    expect(pod).toMatch(/image: registry\.podmin\.internal\/apps\/web@sha256:[0-9a-f]{64}\n/);
  });

  it('draws a progress bar on a terminal (a pseudo-terminal from util-linux script)', async () => {
    // The push before left the blobs in the bucket; a new repository uploads them again.
    const { stdout } = await promisify(execFile)(
      'script',
      [
        '-qec',
        `stty cols 150; ${process.execPath} ${PODMIN_BIN} push hello:v1 tty:v1`,
        '/dev/null',
      ],
      { cwd: sandbox.cwd, env: sandbox.env, timeout: 60_000 },
    );
    expect(stdout).toMatch(
      /Pushing registry\.podmin\.internal\/apps\/tty:v1 \[=+\] 100% \| ([\d.]+ (B|KiB|MiB)) of \1 \| .* \| done in \d+ s/,
    );
    // Drawn in place by cli-progress, not the plain lines of a pipe.
    expect(stdout).not.toMatch(/apps\/tty:v1: /);
    expect(stdout).toContain('registry.podmin.internal/apps/tty:v1');
  });

  it('refuses RUN naming the line, and push without a context', async () => {
    const dir = path.join(sandbox.cwd, 'with-run');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'Containerfile'), 'FROM scratch\n\nRUN make\n');
    const refused = await sandbox.run(['build', dir, '-t', 'x:1']);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(
      /Error: building from Containerfile line 3: RUN needs to run a command/,
    );

    const other = makeSandbox();
    try {
      const push = await other.run(['push', 'hello:v1']);
      expect(push.code).toBe(1);
      expect(push.stderr).toMatch(/context/i);
    } finally {
      other.cleanup();
    }
  });

  it('pulls from a loopback registry over plain HTTP', async () => {
    const served = new Map<string, { type: string; body: Buffer }>();
    const layout = helloLayout();
    const index = JSON.parse(fs.readFileSync(path.join(layout, 'index.json'), 'utf8')) as {
      manifests: Array<{ digest: string; mediaType: string }>;
    };
    for (const d of index.manifests) {
      served.set(d.digest, {
        type: d.mediaType,
        body: fs.readFileSync(path.join(layout, 'blobs/sha256', d.digest.slice(7))),
      });
    }
    const server = http.createServer((req, res) => {
      const match = /^\/v2\/demo\/hello\/(manifests|blobs)\/(.+)$/.exec(req.url ?? '');
      const ref = match?.[2] === 'v1' ? index.manifests[0]!.digest : match?.[2];
      const file =
        ref === undefined
          ? undefined
          : path.join(layout, 'blobs/sha256', ref.replace(/^sha256:/, ''));
      if (file === undefined || !fs.existsSync(file)) {
        res.statusCode = 404;
        res.end();
        return;
      }
      res.setHeader('content-type', served.get(ref!)?.type ?? 'application/octet-stream');
      res.setHeader('docker-content-digest', ref!);
      res.end(fs.readFileSync(file));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as { port: number }).port;
      const pull = await sandbox.run(['pull', `127.0.0.1:${port}/demo/hello:v1`]);
      expect(pull.stderr).not.toContain('Error');
      expect(pull.stdout).toBe(`127.0.0.1:${port}/demo/hello:v1@${index.manifests[0]!.digest}\n`);
      expect(pull.code).toBe(0);
      // The pinned shape (README "Output and exit codes"), as JSON and YAML.
      const expected = {
        reference: `127.0.0.1:${port}/demo/hello:v1`,
        digest: index.manifests[0]!.digest,
      };
      const json = await sandbox.run(['pull', `127.0.0.1:${port}/demo/hello:v1`, '-o', 'json']);
      expect([json.code, JSON.parse(json.stdout)]).toEqual([0, expected]);
      const yaml = await sandbox.run(['pull', `127.0.0.1:${port}/demo/hello:v1`, '-o', 'yaml']);
      expect([yaml.code, parseYaml(yaml.stdout)]).toEqual([0, expected]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
