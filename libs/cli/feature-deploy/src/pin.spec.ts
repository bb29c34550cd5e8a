import { RecordingReporter } from '@podmin/cli-util-io';
import { daemonSetManifest, InMemoryObjectStore } from '@podmin/testing';
import { INDEX_KEY, parseIndex, revisionOf } from '@podmin/util-desired-state';
import { ValidationError } from '@podmin/util-errors';
import { buildDeployment, parsePodPayload, podImageUses } from '@podmin/util-manifest';
import { publishImage } from './__fixtures__/published-image';
import { deleteDeployment } from './commit';
import { deploy, type DeployDeps } from './deploy';
import { ImageIndexReads, pinPod, resolveImageDigests } from './pin';
import { assertPreflight, type PreflightDeps } from './preflight';
import { rollbackDeployment } from './rollback';

function manifest(images: Record<string, string>, init?: Record<string, string>): string {
  return daemonSetManifest({
    nodegroup: 'workers',
    containers: images,
    ...(init === undefined ? {} : { initContainers: init }),
  });
}

const build = (text: string) => buildDeployment(text, { source: 'web.yaml' });
const REPO = 'registry.podmin.internal/apps';

describe('deploy by digest (issue 34 item 1)', () => {
  let bucket: InMemoryObjectStore;
  let digest: string;
  let preflightDeps: PreflightDeps;

  beforeEach(() => {
    bucket = new InMemoryObjectStore();
    digest = publishImage(bucket, 'web', 'v1');
    publishImage(bucket, 'web', 'v2', ['amd64'], 'two');
    publishImage(bucket, 'sidecar', 'v1');
    preflightDeps = {
      bucket,
      cluster: 'demo',
      secretExists: () => Promise.resolve(true),
      architectures: { kind: 'host', arch: 'amd64' },
    };
    bucket.calls.length = 0;
  });

  const deps = (
    text: string,
    opts: { pin?: boolean; preflight?: boolean } = {},
  ): DeployDeps & { reporter: RecordingReporter } => ({
    prepare: () => Promise.resolve(build(text)),
    openBucket: () => Promise.resolve({ context: { cluster: 'demo' }, store: bucket }),
    reporter: new RecordingReporter(),
    ...(opts.pin === undefined ? {} : { pin: opts.pin }),
    ...(opts.preflight === true
      ? {
          preflight: (d, store, reads) =>
            assertPreflight({ ...preflightDeps, bucket: store }, d, reads),
        }
      : {}),
  });

  const committedPod = (key = 'workers/web') => {
    const podKey = parseIndex(bucket.objects.get(INDEX_KEY)!.body)[key]!.pod;
    const text = bucket.objects.get(podKey)!.body.toString('utf8');
    return { podKey, text, pod: parsePodPayload(text, podKey).pod };
  };

  it('reads one index.json per distinct repository, shared by every reader', async () => {
    const reads = new ImageIndexReads(bucket);
    const uses = podImageUses(
      build(manifest({ a: 'web:v1', b: 'web:v2', c: 'sidecar:v1' }, { i: 'web:v1' })).pod,
    );
    const digests = await resolveImageDigests(reads, uses, 'test');
    expect(digests.get(`${REPO}/web:v1`)).toBe(digest);
    expect(reads.started).toBe(2);
    expect([...bucket.calls].sort()).toEqual([
      'get apps/sidecar/index.json',
      'get apps/web/index.json',
    ]);
  });

  it('commits name@sha256 and keeps the tag in podmin.dev/image-tags', async () => {
    const text = manifest({ web: 'web:v1', sidecar: 'sidecar:v1' }, { setup: 'web:v2' });
    await deploy(deps(text));
    const { pod } = committedPod();
    const images = podImageUses(pod).map((u) => u.image);
    expect(images[0]).toBe(`${REPO}/web@${digest}`);
    expect(
      images.every((i) => /^registry\.podmin\.internal\/apps\/[a-z]+@sha256:[0-9a-f]{64}$/.test(i)),
    ).toBe(true);
    const annotations = (pod['metadata'] as { annotations: Record<string, string> }).annotations;
    expect(JSON.parse(annotations['podmin.dev/image-tags']!)).toEqual({
      setup: `${REPO}/web:v2`,
      sidecar: `${REPO}/sidecar:v1`,
      web: `${REPO}/web:v1`,
    });
    // The annotation's keys are sorted, so equal pins give byte-identical payloads.
    expect(annotations['podmin.dev/image-tags']).toBe(
      `{"setup":"${REPO}/web:v2","sidecar":"${REPO}/sidecar:v1","web":"${REPO}/web:v1"}`,
    );
  });

  it('leaves the committed payload byte-identical when the tag moves afterwards; the next deploy pins the new digest', async () => {
    const text = manifest({ web: 'web:v1' });
    await deploy(deps(text));
    const before = committedPod();
    const moved = publishImage(bucket, 'web', 'v1', ['amd64'], 'attacker');
    expect(moved).not.toBe(digest);
    expect(committedPod().text).toBe(before.text);
    expect(bucket.objects.get(before.podKey)!.body.toString('utf8')).toBe(before.text);
    await deploy(deps(text));
    expect(podImageUses(committedPod().pod)[0]?.image).toBe(`${REPO}/web@${moved}`);
  });

  it('keeps a reference already given by digest as it is, reading nothing for it', async () => {
    const text = manifest({ web: `web@${digest}` });
    await deploy(deps(text));
    expect(bucket.calls.filter((c) => c.includes('apps/'))).toEqual([]);
    const { pod } = committedPod();
    expect(podImageUses(pod)[0]?.image).toBe(`${REPO}/web@${digest}`);
    expect(
      (pod['metadata'] as { annotations: Record<string, string> }).annotations[
        'podmin.dev/image-tags'
      ],
    ).toBeUndefined();
  });

  it('--no-pin commits the tag, with no annotation and no index.json read', async () => {
    await deploy(deps(manifest({ web: 'web:v1' }), { pin: false }));
    expect(bucket.calls.filter((c) => c.includes('apps/'))).toEqual([]);
    const { pod } = committedPod();
    expect(podImageUses(pod)[0]?.image).toBe(`${REPO}/web:v1`);
    expect(JSON.stringify(pod)).not.toContain('image-tags');
  });

  it('refuses a tag that is not published, naming the field and the push, with nothing written', async () => {
    const err = await deploy(deps(manifest({ web: 'web:v1', side: 'web:v9' }))).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ValidationError);
    const problem = (err as ValidationError).problems;
    expect(problem).toEqual([
      {
        field: 'spec.template.spec.containers[1].image',
        message:
          'registry.podmin.internal/apps/web:v9 is not published: apps/web/index.json has no tag v9 (published: v1, v2); publish it there: `podmin push <image> web:v9` (or push first and use the reference push prints)',
      },
    ]);
    expect((err as ValidationError).code).toBe('INVALID_MANIFEST');
    expect((err as ValidationError).message).toContain('nothing was written');
    expect(bucket.calls.filter((c) => c.startsWith('put'))).toEqual([]);
  });

  it("with the preflight, shows the preflight's refusal (same field and push command)", async () => {
    const err = await deploy(deps(manifest({ web: 'web:v9' }), { preflight: true })).catch(
      (e: unknown) => e,
    );
    expect((err as ValidationError).message).toMatch(/^preflight of workers\/web/);
    expect((err as ValidationError).problems[0]?.field).toBe(
      'spec.template.spec.containers[0].image',
    );
    expect(bucket.calls.filter((c) => c.startsWith('put'))).toEqual([]);
  });

  describe('request counts of a deploy whose payloads already exist (budget: 4, pinning +1 per distinct repository without the preflight, +0 with it)', () => {
    const text = manifest({ web: 'web:v1', sidecar: 'sidecar:v1' }, { setup: 'web:v2' });
    const count = async (opts: { pin?: boolean; preflight?: boolean }) => {
      await deploy(deps(text, opts));
      // Delete the entry so the next deploy commits it again over existing payloads.
      await deleteDeployment(bucket, 'workers', 'web');
      bucket.calls.length = 0;
      await deploy(deps(text, opts));
      return [...bucket.calls];
    };

    it('--no-pin --no-preflight: the commit alone (index read, Pod payload read, index write)', async () => {
      const calls = await count({ pin: false });
      expect(calls).toHaveLength(3);
      expect(calls.filter((c) => c.includes('apps/'))).toEqual([]);
    });

    it('pinned, --no-preflight: one index.json per distinct repository more', async () => {
      const unpinned = (await count({ pin: false })).length;
      bucket.calls.length = 0;
      const calls = await count({});
      expect(calls.filter((c) => c.startsWith('get apps/')).sort()).toEqual([
        'get apps/sidecar/index.json',
        'get apps/web/index.json',
      ]);
      expect(calls).toHaveLength(unpinned + 2);
    });

    it('pinned with the preflight: no request more than the preflight alone', async () => {
      const unpinned = await count({ pin: false, preflight: true });
      const pinned = await count({ preflight: true });
      expect(pinned).toHaveLength(unpinned.length);
      expect(pinned.filter((c) => c.endsWith('/index.json') && c.includes('apps/'))).toHaveLength(
        2,
      );
    });
  });

  describe('rollback', () => {
    it('pins a tag-based revision as a new revision; --no-pin and pinned revisions stay byte-identical', async () => {
      // v1 committed by tag (--no-pin), then v2 pinned.
      await deploy(deps(manifest({ web: 'web:v1' }), { pin: false }));
      const tagged = committedPod();
      await deploy(deps(manifest({ web: 'web:v2' })));
      const pinnedV2 = committedPod();

      const kept = await rollbackDeployment(
        bucket,
        { nodegroup: 'workers', name: 'web' },
        { pin: false },
      );
      expect(kept.pinnedFrom).toBeUndefined();
      expect(committedPod().podKey).toBe(tagged.podKey);

      // Back to v2 (already pinned): byte-identical, nothing pinned.
      const back = await rollbackDeployment(bucket, { nodegroup: 'workers', name: 'web' });
      expect(back.pinnedFrom).toBeUndefined();
      expect(committedPod().podKey).toBe(pinnedV2.podKey);

      // Back to the tag-based v1: pinned at rollback time, the old payload left as it was.
      const pinned = await rollbackDeployment(bucket, { nodegroup: 'workers', name: 'web' });
      expect(pinned.pinnedFrom).toBe(revisionOf({ pod: tagged.podKey }));
      expect(pinned.revision).not.toBe(pinned.pinnedFrom);
      const now = committedPod();
      expect(now.podKey).not.toBe(tagged.podKey);
      expect(podImageUses(now.pod)[0]?.image).toBe(`${REPO}/web@${digest}`);
      expect(bucket.objects.get(tagged.podKey)!.body.toString('utf8')).toBe(tagged.text);
    });

    it('refuses to pin a revision whose tag is gone, writing nothing', async () => {
      await deploy(deps(manifest({ web: 'web:v1' }), { pin: false }));
      await deploy(deps(manifest({ web: 'web:v2' })));
      bucket.objects.delete('apps/web/index.json');
      bucket.calls.length = 0;
      const err = await rollbackDeployment(bucket, { nodegroup: 'workers', name: 'web' }).catch(
        (e: unknown) => e,
      );
      expect((err as ValidationError).problems[0]?.message).toMatch(
        /web:v1 is not published: the bucket has no apps\/web\/index\.json/,
      );
      expect(bucket.calls.filter((c) => c.startsWith('put'))).toEqual([]);
    });
  });

  it('pinPod leaves an all-digest Pod alone (undefined)', async () => {
    const pod = build(manifest({ web: `web@${digest}` })).pod;
    expect(await pinPod(new ImageIndexReads(bucket), pod, 'test')).toBeUndefined();
    expect(bucket.calls).toEqual([]);
  });
});
