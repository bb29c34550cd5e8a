import fs from 'node:fs';
import path from 'node:path';
import { connectedLocalSandbox, snapshotDir, type CliSandbox } from './cli-harness';

// Issue 34 item 1, deploy by digest: the built CLI on the local provider. deploy resolves each
// tag through the repository's index.json in the bucket and commits name@sha256, keeping the
// tag in the podmin.dev/image-tags annotation; a tag moved later changes nothing committed.

const FIXTURE = path.resolve(
  __dirname,
  '../../../../libs/cli/feature-image/src/__fixtures__/hello-app',
);
const HOST_ARCH = process.arch === 'x64' ? 'amd64' : process.arch;
const HELLO = 'registry.podmin.internal/apps/hello';

describe('deploy by digest (local provider)', () => {
  let sandbox: CliSandbox;
  let bucket: string;
  const podmin = (...args: string[]) => sandbox.run(args);
  const read = (key: string): string => fs.readFileSync(path.join(bucket, key), 'utf8');
  /** The digest `tag` names in apps/hello/index.json now. */
  const tagged = (tag: string): string => {
    const index = JSON.parse(read('apps/hello/index.json')) as {
      manifests: Array<{ digest: string; annotations?: Record<string, string> }>;
    };
    const found = index.manifests.find(
      (d) => d.annotations?.['org.opencontainers.image.ref.name'] === tag,
    );
    if (found === undefined) throw new Error(`no tag ${tag}`);
    return found.digest;
  };
  /** The committed Pod payload of `default/<name>`. */
  const committed = (name: string): { key: string; text: string } => {
    const index = JSON.parse(read('deployments/index.json')) as Record<string, { pod: string }>;
    const key = index[`default/${name}`]?.pod;
    if (key === undefined) throw new Error(`default/${name} is not committed`);
    return { key, text: read(key) };
  };
  const desiredState = (): Record<string, string> =>
    Object.fromEntries(Object.entries(snapshotDir(bucket)).filter(([k]) => !k.startsWith('apps/')));

  beforeAll(async () => {
    ({ sandbox, bucket } = await connectedLocalSandbox());
    const other = HOST_ARCH === 'amd64' ? 'arm64' : 'amd64';
    const built = await podmin(
      'build',
      FIXTURE,
      '-t',
      'hello:v1',
      '--platform',
      `linux/${HOST_ARCH},linux/${other}`,
    );
    expect(built.code).toBe(0);
    expect((await podmin('push', 'hello:v1')).code).toBe(0);
  }, 180_000);
  afterAll(() => sandbox.cleanup());

  it('commits name@sha256 with the tag annotation; a later push under the same tag leaves it byte-identical', async () => {
    const deployed = await podmin('deploy', 'web', '-g', 'default', '--image', 'hello:v1');
    expect(deployed.stderr).not.toMatch(/Error/);
    expect(deployed.code).toBe(0);
    const digest = tagged('v1');
    const first = committed('web');
    expect(first.text).toContain(`image: ${HELLO}@${digest}`);
    expect(first.text).not.toContain(`${HELLO}:v1\n`);
    expect(first.text).toContain(`podmin.dev/image-tags: '{"web":"${HELLO}:v1"}'`);

    const history = await podmin('history', 'web', '-g', 'default');
    expect(history.stdout).toContain(`${HELLO}:v1@${digest}`);

    // Another image pushed under the same tag: the tag moves, what is committed does not.
    const before = desiredState();
    const rebuilt = await podmin(
      'build',
      FIXTURE,
      '-t',
      'hello:v1',
      '--platform',
      `linux/${HOST_ARCH}`,
    );
    expect(rebuilt.code).toBe(0);
    expect((await podmin('push', 'hello:v1')).code).toBe(0);
    expect(tagged('v1')).not.toBe(digest);
    expect(desiredState()).toEqual(before);
    expect(committed('web')).toEqual(first);

    // The next deploy pins what the tag names now.
    expect((await podmin('deploy', 'web', '-g', 'default', '--image', 'hello:v1')).code).toBe(0);
    expect(committed('web').text).toContain(`image: ${HELLO}@${tagged('v1')}`);
  }, 120_000);

  it('--no-pin keeps the tag and writes no annotation', async () => {
    const result = await podmin(
      'deploy',
      'tags',
      '-g',
      'default',
      '--image',
      'hello:v1',
      '--no-pin',
    );
    expect(result.code).toBe(0);
    const { text } = committed('tags');
    expect(text).toContain(`image: ${HELLO}:v1\n`);
    expect(text).not.toContain('image-tags');
  });

  it('refuses an unknown tag with exit code 1, naming the field and the push, writing nothing', async () => {
    const before = snapshotDir(bucket);
    for (const preflight of [[], ['--no-preflight']]) {
      const result = await podmin(
        'deploy',
        'missing',
        '-g',
        'default',
        '--image',
        'hello:v9',
        ...preflight,
      );
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/spec\.template\.spec\.containers\[0\]\.image/);
      expect(result.stderr).toMatch(
        /apps\/hello\/index\.json has no tag v9 \(published: v1\); publish it there: `podmin push <image> hello:v9`/,
      );
      expect(result.stderr).toMatch(/nothing was written/);
      expect(snapshotDir(bucket)).toEqual(before);
    }
  });

  it('rollback pins a revision committed by tag, and --no-pin re-commits it byte-identical', async () => {
    expect(
      (await podmin('deploy', 'rb', '-g', 'default', '--image', 'hello:v1', '--no-pin')).code,
    ).toBe(0);
    const byTag = committed('rb');
    expect((await podmin('deploy', 'rb', '-g', 'default', '--image', 'hello:v1')).code).toBe(0);
    const pinned = committed('rb');
    expect(pinned.key).not.toBe(byTag.key);

    const kept = await podmin('rollback', 'rb', '-g', 'default', '--no-pin');
    expect(kept.code).toBe(0);
    expect(committed('rb')).toEqual(byTag);

    // Back to the pinned revision: committed byte-identical.
    expect((await podmin('rollback', 'rb', '-g', 'default')).code).toBe(0);
    expect(committed('rb')).toEqual(pinned);

    // Back to the tag revision, pinned now: the same payload a pinned deploy wrote.
    const rolled = await podmin('rollback', 'rb', '-g', 'default');
    expect(rolled.code).toBe(0);
    expect(rolled.stderr).toMatch(/named its images by tag; pinned them by digest as revision/);
    expect(committed('rb')).toEqual(pinned);
    expect(read(byTag.key)).toBe(byTag.text);
  }, 60_000);
});
