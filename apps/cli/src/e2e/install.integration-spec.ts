import fs from 'node:fs';
import path from 'node:path';
import { LayoutRegistry } from '@podmin/testing';
import { makeSandbox, runCli, snapshotDir, type CliSandbox } from './cli-harness';

/** The pinned tag; the stand-in is published under it so the mirror keeps the upstream name. */
const VERSION = '2026.8.2';
const SOURCE = `docker.io/cloudflare/cloudflared:${VERSION}`;
const MIRROR = 'mirror/docker.io/cloudflare/cloudflared';
const SECRET_CREATE =
  'podmin secret create tunnel-token --for cloudflared -n platform-cloudflared --provider aws-parameter-store';
const TOKEN = 'eyJhIjoi-stand-in-tunnel-token';

interface Layout {
  index: { manifests: Array<{ digest: string; annotations?: Record<string, string> }> };
}

/** The digest the builder's layout tags `tag` with. */
function taggedDigest(layoutDir: string, tag: string): string {
  const layout = JSON.parse(
    fs.readFileSync(path.join(layoutDir, 'index.json'), 'utf8'),
  ) as Layout['index'];
  const found = layout.manifests.find(
    (d) => d.annotations?.['org.opencontainers.image.ref.name'] === tag,
  );
  if (found === undefined) throw new Error(`${tag} is not in ${layoutDir}`);
  return found.digest;
}

describe('podmin install cloudflared on a local bucket, the image from a loopback registry', () => {
  const builder = makeSandbox();
  const layoutDir = path.join(
    builder.cacheHome,
    'podmin',
    'oci',
    'docker.io',
    'cloudflare',
    'cloudflared',
  );
  const registry = new LayoutRegistry(layoutDir, 'cloudflare/cloudflared');
  let pinned = '';
  let other = '';
  const operators: CliSandbox[] = [];

  /** A connected operator whose install sees the loopback registry and the stand-in's pin. */
  async function operator(): Promise<{ sandbox: CliSandbox; bucket: string }> {
    const sandbox = makeSandbox({
      PODMIN_TEST_UPSTREAM_REGISTRY_URL: registry.url,
      PODMIN_TEST_CLOUDFLARED_PIN: `${VERSION}@${pinned}`,
    });
    operators.push(sandbox);
    const connected = await sandbox.run(['connect', 'demo', '--provider', 'local']);
    expect(connected.code).toBe(0);
    return { sandbox, bucket: path.join(sandbox.dataHome, 'podmin', 'buckets', 'demo') };
  }

  /** `podmin secret create` of the token from stdin. */
  async function createToken(sandbox: CliSandbox): Promise<void> {
    const created = await runCli(
      [
        'secret',
        'create',
        'tunnel-token',
        '--for',
        'cloudflared',
        '-n',
        'platform-cloudflared',
        '--from-stdin',
      ],
      { cwd: sandbox.cwd, env: sandbox.env, stdin: TOKEN },
    );
    expect(created.stderr).toContain(
      'Created tunnel-token for pod cloudflared in namespace platform-cloudflared',
    );
    expect(created.code).toBe(0);
  }

  beforeAll(async () => {
    const context = path.join(__dirname, 'cloudflared-standin');
    for (const [tag, flavor] of [
      [VERSION, 'pinned'],
      ['other', 'other'],
    ] as const) {
      const built = await builder.run([
        'build',
        context,
        '-t',
        `docker.io/cloudflare/cloudflared:${tag}`,
        '--platform',
        'linux/amd64',
        '--platform',
        'linux/arm64',
        '--build-arg',
        `FLAVOR=${flavor}`,
      ]);
      expect(built.stderr).not.toContain('Error');
      expect(built.code).toBe(0);
    }
    pinned = taggedDigest(layoutDir, VERSION);
    other = taggedDigest(layoutDir, 'other');
    expect(other).not.toBe(pinned);
    await registry.start();
  }, 120_000);
  afterAll(async () => {
    await registry.stop();
    for (const s of [builder, ...operators]) s.cleanup();
  });

  it('explains itself and refuses another component and a bad NodeGroup', async () => {
    const { sandbox, bucket } = await operator();
    const help = await sandbox.run(['install', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('/<cluster>/platform-cloudflared/cloudflared/tunnel-token');
    expect(help.stdout).toContain('read-only root filesystem');
    const before = snapshotDir(bucket);
    const foo = await sandbox.run(['install', 'foo', '-g', 'edge']);
    expect(foo.code).toBe(1);
    expect(foo.stderr).toContain(
      'Error: installing "foo": not a built-in component; podmin installs only cloudflared',
    );
    const bad = await sandbox.run(['install', 'cloudflared', '-g', 'Edge_1']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--nodegroup: "Edge_1" is invalid/);
    expect(snapshotDir(bucket)).toEqual(before);
    expect(registry.requests).toEqual([]);
  });

  it('stops before writing anything when the tunnel token is missing, printing the fix', async () => {
    const { sandbox, bucket } = await operator();
    const before = snapshotDir(bucket);
    const refused = await sandbox.run(['install', 'cloudflared', '-g', 'edge']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      'Error: installing cloudflared: the tunnel token /demo/platform-cloudflared/cloudflared/tunnel-token does not exist in aws-parameter-store; nothing was written',
    );
    expect(refused.stderr).toContain(`Hint: create it, then install again: ${SECRET_CREATE}`);
    expect(snapshotDir(bucket)).toEqual(before);
    expect(registry.requests).toEqual([]);
  });

  it('mirrors the pinned digest, commits the hardened Pod, and a re-run changes no byte', async () => {
    const { sandbox, bucket } = await operator();
    await createToken(sandbox);
    const first = await sandbox.run(['install', 'cloudflared', '-g', 'edge']);
    expect(first.stderr).not.toContain('Error');
    expect(first.code).toBe(0);
    expect(first.stdout).toBe('edge/cloudflared\n');
    expect(first.stderr).toContain(
      'Tunnel token /demo/platform-cloudflared/cloudflared/tunnel-token exists in aws-parameter-store (its value is not read)',
    );
    expect(first.stderr).toContain(`Mirrored ${SOURCE} to ${MIRROR}@${pinned}`);
    expect(first.stderr).toContain('Committed: edge/cloudflared');
    expect(`${first.stdout}${first.stderr}`).not.toContain(TOKEN);
    // Pulled by the pinned digest, never by tag.
    expect(registry.requests[0]).toBe(`GET /v2/cloudflare/cloudflared/manifests/${pinned}`);
    expect(registry.requests.some((r) => r.includes(`manifests/${VERSION}`))).toBe(false);

    const mirrorIndex = JSON.parse(
      fs.readFileSync(path.join(bucket, MIRROR, 'index.json'), 'utf8'),
    ) as Layout['index'];
    const tagged = mirrorIndex.manifests.find(
      (d) => d.annotations?.['org.opencontainers.image.ref.name'] === VERSION,
    );
    expect(tagged?.digest).toBe(pinned);
    // Both platforms are listed at top level for the node registry's digest lookups.
    expect(mirrorIndex.manifests).toHaveLength(3);

    const list = await sandbox.run(['list']);
    expect(list.stdout).toMatch(
      /^cloudflared\s+platform-cloudflared\s+edge\s+-\s+install\/cloudflared\s*$/m,
    );
    const desired = JSON.parse(
      fs.readFileSync(path.join(bucket, 'deployments', 'index.json'), 'utf8'),
    ) as Record<string, { pod: string }>;
    expect(Object.keys(desired)).toEqual(['edge/cloudflared']);
    const pod = fs.readFileSync(path.join(bucket, desired['edge/cloudflared']?.pod ?? ''), 'utf8');
    for (const fragment of [
      `image: registry.podmin.internal/${MIRROR}@${pinned}`,
      'podmin.dev/origin: install/cloudflared',
      'podmin.dev/aws-parameter-store: tunnel-token',
      'runAsNonRoot: true',
      'runAsUser: 65532',
      'readOnlyRootFilesystem: true',
      'allowPrivilegeEscalation: false',
      '- ALL',
      'memory: 256Mi',
      'path: /ready',
      '- /var/run/podmin/aws-parameter-store/tunnel-token',
    ]) {
      expect(pod).toContain(fragment);
    }
    expect(pod).not.toContain(TOKEN);

    // Re-run with an empty image cache: the mirror index in the bucket is what is reused.
    fs.rmSync(path.join(sandbox.cacheHome, 'podmin', 'oci'), {
      recursive: true,
      force: true,
    });
    const asked = registry.requests.length;
    const before = snapshotDir(bucket);
    const again = await sandbox.run(['install', 'cloudflared', '-g', 'edge']);
    expect(again.code).toBe(0);
    expect(again.stdout).toBe('edge/cloudflared\n');
    expect(again.stderr).toContain(`Reusing ${MIRROR} (${VERSION}, ${pinned}): already mirrored`);
    expect(again.stderr).toContain('Already committed (unchanged): edge/cloudflared');
    expect(snapshotDir(bucket)).toEqual(before);
    expect(registry.requests.length).toBe(asked);
  });

  it('refuses an upstream that answers another digest, writing nothing', async () => {
    const { sandbox, bucket } = await operator();
    await createToken(sandbox);
    registry.substitute.set(pinned, other);
    try {
      const before = snapshotDir(bucket);
      const refused = await sandbox.run(['install', 'cloudflared', '-g', 'edge']);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(
        `Error: installing cloudflared: mirroring the pinned image ${SOURCE}@${pinned}`,
      );
      expect(refused.stderr).toContain(`hashes to ${other}, not ${pinned}`);
      expect(snapshotDir(bucket)).toEqual(before);
      expect(fs.existsSync(path.join(bucket, 'deployments', 'index.json'))).toBe(false);
      expect(fs.existsSync(path.join(bucket, MIRROR))).toBe(false);
    } finally {
      registry.substitute.clear();
    }
  });
});
