import { InMemoryObjectStore, commitDesiredState, daemonSetManifest } from '@podmin/testing';
import { ValidationError } from '@podmin/util-errors';
import { buildDeployment } from '@podmin/util-manifest';
import { RecordingReporter } from '@podmin/cli-util-io';
import { publishImage } from './__fixtures__/published-image';
import { deploy } from './deploy';
import { assertPreflight, preflight, type PreflightDeps } from './preflight';

/** Publishes `apps/<repo>` with `tag` as an image index of `arches` (as push writes it). */
function publish(bucket: InMemoryObjectStore, repo: string, tag: string, arches: string[]): void {
  publishImage(bucket, repo, tag, arches);
}

function manifest(opts: { image?: string; secrets?: string; service?: string } = {}): string {
  return daemonSetManifest({
    nodegroup: 'workers',
    image: opts.image ?? 'web:v1',
    ...(opts.secrets === undefined ? {} : { secret: opts.secrets }),
    ...(opts.service === undefined ? {} : { servicePort: 80, serviceSelector: opts.service }),
  });
}

const build = (text: string) => buildDeployment(text, { source: 'web.yaml' });

describe('deploy preflight (issue 31)', () => {
  let bucket: InMemoryObjectStore;
  let secrets: Set<string>;
  let deps: PreflightDeps;

  beforeEach(() => {
    bucket = new InMemoryObjectStore();
    secrets = new Set();
    deps = {
      bucket,
      cluster: 'demo',
      secretExists: (provider, name) => Promise.resolve(secrets.has(`${provider} ${name}`)),
      architectures: { kind: 'host', arch: 'amd64' },
    };
    publish(bucket, 'web', 'v1', ['amd64', 'arm64']);
    bucket.calls.length = 0;
  });

  it('passes a published image, an existing secret and a Service selecting its own Pod', async () => {
    secrets.add('aws-parameter-store /demo/product/web/config.yaml');
    const report = await preflight(
      deps,
      build(manifest({ secrets: 'config.yaml', service: 'web' })),
    );
    expect(report).toEqual({ problems: [], warnings: [] });
    // Never a secret value and never a write: only the image's index and its image index.
    expect(bucket.calls).toHaveLength(2);
    expect(bucket.calls).toContain('get apps/web/index.json');
    expect(
      bucket.calls.filter((c) => /^get apps\/web\/blobs\/sha256\/[0-9a-f]{64}$/.test(c)),
    ).toHaveLength(1);
  });

  it('refuses an unpublished repository and a missing tag, naming the push that fixes each', async () => {
    const report = await preflight(deps, build(manifest({ image: 'web:v2' })));
    expect(report.problems).toEqual([
      {
        field: 'spec.template.spec.containers[0].image',
        message:
          'registry.podmin.internal/apps/web:v2 is not published: apps/web/index.json has no tag v2 (published: v1); publish it there: `podmin push <image> web:v2` (or push first and use the reference push prints)',
      },
    ]);
    const absent = await preflight(deps, build(manifest({ image: 'acme/api' })));
    expect(absent.problems[0]?.message).toBe(
      'registry.podmin.internal/apps/acme/api:latest is not published: the bucket has no apps/acme/api/index.json; publish it there: `podmin push <image> acme/api:latest` (or push first and use the reference push prints)',
    );
  });

  it('refuses an image without a platform for the NodeGroup architecture', async () => {
    publish(bucket, 'web', 'v1', ['amd64']);
    const report = await preflight(
      { ...deps, architectures: { kind: 'host', arch: 'arm64' } },
      build(manifest()),
    );
    expect(report.problems.map((p) => p.message)).toEqual([
      "registry.podmin.internal/apps/web:v1 has no linux/arm64 image (it has linux/amd64) for this machine, the local provider's node; build and push it for every architecture: `podmin build -t web:v1 --platform linux/amd64,linux/arm64 <dir>` then `podmin push web:v1`",
    ]);
  });

  it('reads the NodeGroup architecture from the infrastructure inputs in the bucket', async () => {
    publish(bucket, 'web', 'v1', ['amd64']);
    const vars = {
      cluster: 'demo',
      region: 'us-east-1',
      bucket: 'b',
      nodegroups: { workers: { arch: 'arm64', instance_type: 't4g.small' } },
    };
    bucket.store('tfstate/podmin.auto.tfvars.json', JSON.stringify(vars));
    const report = await preflight(
      { ...deps, architectures: { kind: 'bucket' } },
      build(manifest()),
    );
    expect(report.problems[0]?.message).toContain(
      'has no linux/arm64 image (it has linux/amd64) for the t4g.small VMs of NodeGroup workers (tfstate/podmin.auto.tfvars.json)',
    );
  });

  it('warns, without refusing, when the infrastructure inputs do not name the NodeGroup', async () => {
    const report = await preflight(
      { ...deps, architectures: { kind: 'bucket' } },
      build(manifest()),
    );
    expect(report.problems).toEqual([]);
    expect(report.warnings).toEqual([
      'Preflight: image architectures not checked: the bucket has no tfstate/podmin.auto.tfvars.json (run `podmin setup` to create NodeGroup workers)',
    ]);
  });

  it('refuses each missing secret by key, never reading a value', async () => {
    secrets.add('aws-parameter-store /demo/product/web/present');
    const report = await preflight(deps, build(manifest({ secrets: 'present,absent' })));
    expect(report.problems).toEqual([
      {
        field: 'spec.template.metadata.annotations["podmin.dev/aws-parameter-store"]',
        message:
          'key absent: secret /demo/product/web/absent does not exist in aws-parameter-store; create it: `podmin secret create absent --for web -n product --provider aws-parameter-store --from-file FILE`',
      },
    ]);
  });

  it('warns when the Service selects no Pod anywhere, and not when another deployment matches', async () => {
    const lonely = await preflight(deps, build(manifest({ service: 'other' })));
    expect(lonely.problems).toEqual([]);
    expect(lonely.warnings).toEqual([
      'Preflight: Service product/web selects no Pod anywhere in the desired state (no Pod in namespace product carries app: "other"); it has no backends until a deployment\'s Pod does',
    ]);
    const other = build(manifest().replaceAll('web', 'other'));
    await commitDesiredState(bucket, { deploy: [other] });
    const matched = await preflight(deps, build(manifest({ service: 'other' })));
    expect(matched.warnings).toEqual([]);
  });

  it('assertPreflight throws one ValidationError listing every problem', async () => {
    const err = await assertPreflight(
      deps,
      build(manifest({ image: 'web:v9', secrets: 'absent' })),
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).problems.map((p) => p.field)).toEqual([
      'spec.template.metadata.annotations["podmin.dev/aws-parameter-store"]',
      'spec.template.spec.containers[0].image',
    ]);
    expect((err as ValidationError).message).toContain('nothing was written');
  });

  it('deploy writes nothing when the preflight refuses, and commits when it passes', async () => {
    const reporter = new RecordingReporter();
    const refused = build(manifest({ image: 'web:v9' }));
    await expect(
      deploy({
        prepare: () => Promise.resolve(refused),
        openBucket: () => Promise.resolve({ context: { cluster: 'demo' }, store: bucket }),
        reporter,
        preflight: (d, store) => assertPreflight({ ...deps, bucket: store }, d),
      }),
    ).rejects.toBeInstanceOf(ValidationError);
    expect(bucket.calls.filter((c) => c.startsWith('put'))).toEqual([]);

    const accepted = build(manifest());
    const result = await deploy({
      prepare: () => Promise.resolve(accepted),
      openBucket: () => Promise.resolve({ context: { cluster: 'demo' }, store: bucket }),
      reporter,
      preflight: (d, store) => assertPreflight({ ...deps, bucket: store }, d),
    });
    expect(result.changed).toBe(true);
  });
});
