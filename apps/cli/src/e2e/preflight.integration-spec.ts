import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { daemonSetYaml, getAwsEmulator, uniqueBucketName } from '@podmin/testing';
import { makeSandbox, snapshotDir, type CliRun, type CliSandbox } from './cli-harness';

// Issue 31, deploy preflight: the built CLI against the local provider and the S3 emulator.
// Each refusal leaves the bucket byte-identical; a Service selecting nothing is a warning.

const FIXTURE = path.resolve(
  __dirname,
  '../../../../libs/cli/feature-image/src/__fixtures__/hello-app',
);
const HOST_ARCH = process.arch === 'x64' ? 'amd64' : process.arch;

/** A provider under test: how to connect, what the nodes run, and a fingerprint of the bucket. */
interface Target {
  sandbox: CliSandbox;
  /** Cluster id: unique on the shared emulator, whose secret store outlives a test run. */
  cluster: string;
  connectArgs: string[];
  /** The architecture of NodeGroup default's nodes. */
  arch: string;
  /** Runs once connected: what setup would have left in the bucket. */
  prepare(): Promise<void>;
  snapshot(): Promise<Record<string, string>>;
}

/** DaemonSet web, with the secret annotation and a Service selecting `selector` when given. */
function daemonSet(opts: { image: string; secrets?: string; selector?: string }): string {
  return daemonSetYaml({
    image: opts.image,
    ...(opts.secrets !== undefined && {
      annotations: { 'podmin.dev/aws-parameter-store': opts.secrets },
    }),
    ...(opts.selector !== undefined && {
      service: { selector: opts.selector, ports: [{ port: 80 }] },
    }),
  });
}

function expectRefused(result: CliRun, pattern: RegExp): void {
  expect(result.stderr).toMatch(pattern);
  expect(result.stderr).toMatch(/^Error: preflight of default\/web: .*nothing was written/m);
  expect(result.stdout).toBe('');
  expect(result.code).toBe(1);
}

function describePreflight(title: string, setup: () => Promise<Target>): void {
  describe(`deploy preflight (${title})`, () => {
    let target: Target;
    const podmin = (...args: string[]) => target.sandbox.run(args);
    const write = (file: string, text: string): void =>
      fs.writeFileSync(path.join(target.sandbox.cwd, file), text);

    beforeAll(async () => {
      target = await setup();
      expect((await podmin('connect', target.cluster, ...target.connectArgs)).code).toBe(0);
      await target.prepare();
      const other = target.arch === 'amd64' ? 'arm64' : 'amd64';
      for (const [tag, platforms] of [
        ['hello:v1', 'linux/amd64,linux/arm64'],
        ['one:v1', `linux/${other}`],
      ] as const) {
        const built = await podmin('build', FIXTURE, '-t', tag, '--platform', platforms);
        expect(built.code).toBe(0);
        const pushed = await podmin('push', tag);
        expect(pushed.code).toBe(0);
      }
    }, 180_000);
    afterAll(() => target.sandbox.cleanup());

    it('refuses a tag that is not published, naming the push that fixes it', async () => {
      const before = await target.snapshot();
      const result = await podmin('deploy', 'web', '-g', 'default', '--image', 'hello:v9');
      expectRefused(
        result,
        /registry\.podmin\.internal\/apps\/hello:v9 is not published: apps\/hello\/index\.json has no tag v9 \(published: v1\); publish it there: `podmin push <image> hello:v9`/,
      );
      expect(await target.snapshot()).toEqual(before);
    });

    it('refuses an image without a platform for the NodeGroup architecture', async () => {
      const before = await target.snapshot();
      const result = await podmin('deploy', 'web', '-g', 'default', '--image', 'one:v1');
      expectRefused(
        result,
        new RegExp(
          `apps/one:v1 has no linux/${target.arch} image \\(it has linux/(amd64|arm64)\\) for .*\`podmin build -t one:v1 --platform linux/amd64,linux/arm64 <dir>\``,
        ),
      );
      expect(await target.snapshot()).toEqual(before);
    });

    it('refuses a secret the annotations name that does not exist, then accepts it once created', async () => {
      write('secret.yaml', daemonSet({ image: 'hello:v1', secrets: 'db-url' }));
      const before = await target.snapshot();
      const result = await podmin('deploy', 'web', '-g', 'default', '-f', 'secret.yaml');
      expectRefused(
        result,
        new RegExp(
          `key db-url: secret /${target.cluster}/default/web/db-url does not exist in aws-parameter-store; create it: \`podmin secret create db-url --for web -n default --provider aws-parameter-store --from-file FILE\``,
        ),
      );
      expect(await target.snapshot()).toEqual(before);

      write('db-url.txt', 'postgres://db');
      const created = await podmin(
        'secret',
        'create',
        'db-url',
        '--for',
        'web',
        '--from-file',
        'db-url.txt',
      );
      expect(created.code).toBe(0);
      const validated = await podmin('validate', '-f', 'secret.yaml', '--preflight');
      expect(validated.stdout).toBe(
        `valid: DaemonSet default/web for NodeGroup default, no Service; preflight passed against cluster ${target.cluster}\n`,
      );
      const deployed = await podmin('deploy', 'web', '-g', 'default', '-f', 'secret.yaml');
      expect(deployed.stderr).not.toMatch(/Preflight/);
      expect(deployed.code).toBe(0);
    });

    it('validate --preflight refuses what deploy would, committing nothing', async () => {
      write('missing.yaml', daemonSet({ image: 'hello:v9' }));
      const before = await target.snapshot();
      const result = await podmin('validate', '-f', 'missing.yaml', '--preflight');
      expectRefused(result, /apps\/hello:v9 is not published/);
      expect(await target.snapshot()).toEqual(before);
      // Without --preflight, validate stays structural and needs no cluster.
      expect((await podmin('validate', '-f', 'missing.yaml')).code).toBe(0);
    });

    it('warns, and still commits, when the Service selects no Pod anywhere', async () => {
      write('lonely.yaml', daemonSet({ image: 'hello:v1', selector: 'nobody' }));
      const result = await podmin('deploy', 'web', '-g', 'default', '-f', 'lonely.yaml');
      expect(result.stderr).toMatch(
        /Preflight: Service default\/web selects no Pod anywhere in the desired state \(no Pod in namespace default carries app: "nobody"\)/,
      );
      expect(result.code).toBe(0);
    });

    it('--no-preflight commits without checking', async () => {
      const result = await podmin(
        'deploy',
        'web',
        '-g',
        'default',
        '--image',
        'hello:v9',
        '--no-preflight',
        '--no-pin',
      );
      expect(result.code).toBe(0);
    });
  });
}

describePreflight('local provider', () => {
  const sandbox = makeSandbox();
  const bucket = path.join(sandbox.dataHome, 'podmin', 'buckets', 'demo');
  return Promise.resolve({
    sandbox,
    cluster: 'demo',
    connectArgs: ['--provider', 'local'],
    arch: HOST_ARCH,
    prepare: () => Promise.resolve(),
    snapshot: () => Promise.resolve(snapshotDir(bucket)),
  });
});

describePreflight('S3 emulator', async () => {
  const emulator = await getAwsEmulator();
  const bucket = uniqueBucketName('podmin-preflight');
  const cluster = `pf${crypto.randomBytes(4).toString('hex')}`;
  const client = new S3Client({
    endpoint: emulator.endpoint,
    region: emulator.region,
    credentials: emulator.credentials,
    forcePathStyle: true,
  });
  const sandbox = makeSandbox({
    AWS_ENDPOINT_URL: emulator.endpoint,
    AWS_ACCESS_KEY_ID: emulator.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: emulator.credentials.secretAccessKey,
  });
  return {
    sandbox,
    cluster,
    connectArgs: ['--provider', 'aws', '--region', emulator.region, '--bucket', bucket],
    arch: 'arm64',
    // What setup leaves: the module inputs naming NodeGroup default's architecture.
    prepare: async () => {
      const vars = {
        cluster,
        region: emulator.region,
        bucket,
        nodegroups: { default: { arch: 'arm64', instance_type: 't4g.small' } },
      };
      await client.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: 'tfstate/podmin.auto.tfvars.json',
          Body: JSON.stringify(vars),
        }),
      );
    },
    snapshot: async () => {
      const out: Record<string, string> = {};
      let token: string | undefined;
      do {
        const page = await client.send(
          new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }),
        );
        for (const o of page.Contents ?? []) {
          const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: o.Key! }));
          const body = Buffer.from(await got.Body!.transformToByteArray());
          out[o.Key!] = crypto.createHash('sha256').update(body).digest('hex');
        }
        token = page.NextContinuationToken;
      } while (token);
      return out;
    },
  };
});
