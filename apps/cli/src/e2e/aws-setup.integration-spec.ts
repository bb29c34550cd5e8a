import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  DescribeImagesCommand,
  DescribeVpcsCommand,
  EC2Client,
  RegisterImageCommand,
} from '@aws-sdk/client-ec2';
import {
  GetObjectCommand,
  HeadBucketCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import {
  describeIf,
  FakeUpstream,
  findTestInfraEngine,
  itIf,
  getAwsEmulator,
  OTEL_LOGS_EXAMPLE,
  uniqueBucketName,
  type AwsEmulator,
  type TestInfraEngine,
} from '@podmin/testing';
import { awsConnectArgs, makeSandbox, type CliSandbox } from './cli-harness';

const REPO = path.resolve(__dirname, '../../../..');
const PLACEHOLDER = path.join(
  REPO,
  'libs/cli/data-access-infra-engine/src/fixtures/placeholder-aws-module',
);
const STATE = 'tfstate/podmin.tfstate';
const TFVARS = 'tfstate/podmin.auto.tfvars.json';
/** The emulator's account, which owns every AMI registered there. */
const TEST_AMI_OWNER = '123456789012';
const PAUSE = 'registry.k8s.io/pause:3.10';
/** Cluster names unique per run: the emulator outlives one run and other files share it. */
const RUN = Date.now().toString(36);
const CUT_CLUSTER = `cut-${RUN}`;
const engine = findTestInfraEngine();

/** A module directory `podmin setup` runs with (PODMIN_TEST_INFRA_MODULE_DIR). */
interface ModuleUnderTest {
  label: string;
  /** Cluster-name prefix. */
  prefix: string;
  dir: string;
  /** A resource type its apply records in the state. */
  resource: string;
  createsVpc: boolean;
  /**
   * What a second setup updates in place although nothing changed: what moto reads back
   * differently (see infra/aws/README.md); empty for a no-op.
   */
  emulatorDrift: string[];
}

/**
 * The real module: `infra/aws` as the CLI embeds it, plus the test-only overrides of
 * `infra/aws/test/emulator-overrides` for what moto cannot do (see infra/aws/README.md). Or why
 * it cannot run here: no module in this checkout, or no AWS provider in the offline mirror.
 */
function realModuleUnderTest(tf: TestInfraEngine): ModuleUnderTest | string {
  const source = path.join(REPO, 'infra/aws');
  const moduleFiles = fs.readdirSync(source).filter((f) => /\.(tf|tftpl)$/.test(f));
  if (!moduleFiles.some((f) => f.endsWith('.tf')))
    return 'infra/aws holds no module in this checkout';
  const rc = tf.env['TF_CLI_CONFIG_FILE'];
  const mirror =
    rc === undefined
      ? undefined
      : path.join(path.dirname(rc), 'providers/registry.opentofu.org/hashicorp/aws');
  if (mirror === undefined || !fs.existsSync(mirror)) {
    return 'the AWS provider is not in the offline mirror (tools/infra-stack/build.sh aws-provider)';
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-real-module-'));
  for (const name of moduleFiles) fs.copyFileSync(path.join(source, name), path.join(dir, name));
  const overrides = path.join(source, 'test/emulator-overrides');
  for (const name of fs.readdirSync(overrides)) {
    fs.copyFileSync(path.join(overrides, name), path.join(dir, name));
  }
  return {
    label: 'the real infra/aws module',
    prefix: 'real',
    dir,
    resource: 'aws_vpc',
    createsVpc: true,
    // Launch templates gain a `launch-template` tag specification (so their version and the
    // group's move), the S3 endpoint loses IpAddressType, the leader rule its description.
    emulatorDrift: [
      'aws_autoscaling_group.nodegroup["default"]',
      'aws_launch_template.nodegroup["default"]',
      'aws_vpc_endpoint.s3',
      'aws_vpc_security_group_ingress_rule.node_leader',
    ],
  };
}

/** A tiny FROM-scratch image tagged as the pause image, built into the sandbox's store. */
async function seedPauseImage(sandbox: CliSandbox): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-pause-'));
  try {
    fs.writeFileSync(path.join(dir, 'pause'), '#!/bin/sh\n# stand-in for the pause binary\n');
    fs.writeFileSync(
      path.join(dir, 'Containerfile'),
      'FROM scratch\nCOPY --chmod=0755 pause /pause\nENTRYPOINT ["/pause"]\n',
    );
    const built = await sandbox.run([
      'build',
      dir,
      '-t',
      PAUSE,
      '--platform',
      'linux/amd64,linux/arm64',
    ]);
    expect(built.stderr).toContain(`Tagged ${PAUSE}`);
    expect(built.code).toBe(0);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Debian's build version of the AMIs this run registers (`YYYYMMDD-N`, as Debian names
 * its AMIs and image manifests), in the future and unique per run.
 */
const DEBIAN_BUILD = `20991231-${String(Date.now() % 10_000).padStart(4, '0')}`;
/** The kernel ABI the registered images boot, and the Jool build published for it. */
const KERNEL_ABI = '6.12.48+deb13';

/** Registers Debian 13 AMIs of both architectures for the test owner; returns their IDs. */
async function registerDebianAmis(ec2: EC2Client): Promise<Record<'arm64' | 'amd64', string>> {
  const ids: Partial<Record<'arm64' | 'amd64', string>> = {};
  for (const [arch, ec2Arch] of [
    ['arm64', 'arm64'],
    ['amd64', 'x86_64'],
  ] as const) {
    const out = await ec2.send(
      new RegisterImageCommand({
        Name: `debian-13-${arch}-${DEBIAN_BUILD}`,
        Architecture: ec2Arch,
        RootDeviceName: '/dev/xvda',
      }),
    );
    ids[arch] = out.ImageId!;
  }
  const listed = await ec2.send(new DescribeImagesCommand({ ImageIds: Object.values(ids) }));
  expect(listed.Images?.every((i) => i.OwnerId === TEST_AMI_OWNER)).toBe(true);
  return { arm64: ids.arm64!, amd64: ids.amd64! };
}

describe('podmin setup on AWS through the bundled CLI (emulator, loopback upstream)', () => {
  let emulator: AwsEmulator;
  let upstream: FakeUpstream;
  let s3: S3Client;
  let ssm: SSMClient;
  let ec2: EC2Client;
  let amis: Record<'arm64' | 'amd64', string>;
  const sandboxes: CliSandbox[] = [];
  /** One provider cache for every setup of this file: the AWS provider is copied once. */
  const pluginCache = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-tf-plugins-'));

  /** A sandbox wired to the emulator, the loopback upstream and the real engine, connected. */
  const connectedSandbox = async (
    cluster: string,
    bucket: string,
    env: Record<string, string> = {},
  ): Promise<CliSandbox> => {
    const sandbox = makeSandbox({
      AWS_ENDPOINT_URL: emulator.endpoint,
      AWS_ACCESS_KEY_ID: emulator.credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: emulator.credentials.secretAccessKey,
      PODMIN_TEST_DEPENDENCY_BASE_URL: upstream.base,
      PODMIN_TEST_DEBIAN_AMI_OWNER: TEST_AMI_OWNER,
      PODMIN_TEST_INFRA_MODULE_DIR: PLACEHOLDER,
      ...(engine === undefined ? {} : { PODMIN_TF_CMD: engine.executable, ...engine.env }),
      ...env,
    });
    sandboxes.push(sandbox);
    const connected = await sandbox.run(awsConnectArgs(cluster, emulator.region, bucket));
    expect(connected.code).toBe(0);
    return sandbox;
  };

  /**
   * Runs `body` in a sandbox connected to a new bucket, set up with `module` and holding the
   * seeded pause image. A body that fails before its own destroy has the cluster destroyed, so
   * the emulator (which outlives this run) keeps none of its VPC.
   */
  const inModuleCluster = async (
    module: ModuleUnderTest,
    cluster: string,
    bucketPrefix: string,
    body: (sandbox: CliSandbox, bucket: string) => Promise<void>,
  ): Promise<void> => {
    const bucket = uniqueBucketName(bucketPrefix);
    const sandbox = await connectedSandbox(cluster, bucket, {
      PODMIN_TEST_INFRA_MODULE_DIR: module.dir,
      TF_PLUGIN_CACHE_DIR: pluginCache,
    });
    await seedPauseImage(sandbox);
    try {
      await body(sandbox, bucket);
    } catch (err) {
      await sandbox.run(['destroy', '-y']);
      throw err;
    }
  };

  const listKeys = async (bucket: string): Promise<string[]> => {
    const out = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
    return (out.Contents ?? []).map((o) => o.Key!).sort();
  };
  const readObject = async (bucket: string, key: string): Promise<string> =>
    (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body!.transformToString();

  beforeAll(async () => {
    emulator = await getAwsEmulator();
    const clientConfig = {
      endpoint: emulator.endpoint,
      region: emulator.region,
      credentials: emulator.credentials,
    };
    s3 = new S3Client({ ...clientConfig, forcePathStyle: true });
    ssm = new SSMClient(clientConfig);
    ec2 = new EC2Client(clientConfig);
    upstream = await new FakeUpstream().start();
    // Only the tag the seeded image carries, so the resolver picks exactly that one.
    upstream.setRegistryTags('pause', ['3.9', '3.10']);
    amis = await registerDebianAmis(ec2);
    // Debian's image manifests of those builds, and jool-builds releases: an older Jool and
    // one for another kernel that must not be chosen.
    for (const arch of ['amd64', 'arm64']) {
      upstream.addDebianImage(DEBIAN_BUILD, arch, `${KERNEL_ABI}-cloud-${arch}`);
    }
    await upstream.addJoolBuild({ joolVersion: '4.1.14', kernelAbi: KERNEL_ABI });
    await upstream.addJoolBuild({ joolVersion: '4.1.15', kernelAbi: KERNEL_ABI });
    await upstream.addJoolBuild({ joolVersion: '4.1.16', kernelAbi: '6.12.57+deb13' });
  }, 180_000);

  afterAll(async () => {
    for (const sandbox of sandboxes) sandbox.cleanup();
    fs.rmSync(pluginCache, { recursive: true, force: true });
    await upstream?.stop();
  });

  it('fetches every dependency from the loopback upstream and the seeded pause image', async () => {
    const sandbox = await connectedSandbox('fetcher', uniqueBucketName('podmin-fetch-e2e'));
    await seedPauseImage(sandbox);
    const before = upstream.requests.length;
    const fetched = await sandbox.run(['fetch', '--arch', 'arm64']);
    expect(fetched.stderr).not.toContain('Error');
    expect(fetched.code).toBe(0);
    expect(fetched.stdout).toMatch(/^containerd\tarm64\t2\.1\.5\t/m);
    expect(fetched.stdout).toMatch(/^podmin-agent\tarm64\t0\.1\.0\t/m);
    expect(fetched.stdout).toMatch(
      /^pause\timage\t3\.10\tregistry\.k8s\.io\/pause:3\.10@sha256:[0-9a-f]{64}$/m,
    );
    const served = upstream.requests.slice(before);
    expect(served).toContain('/gh/repos/containerd/containerd/releases');
    expect(served).toContain('/registry/v2/pause/tags/list');
    expect(served).toContain('/k8s/release/v1.36.2/bin/linux/arm64/kubelet');
  }, 120_000);

  describeIf(
    engine !== undefined,
    'infra-e2e',
    'no OpenTofu/Terraform (build it with tools/infra-stack/build.sh, or put tofu on PATH); setup apply flows not run',
  )('with the real engine', () => {
    /** The engine: read only inside tests, which run only when there is one. */
    const tf = (): TestInfraEngine => {
      if (engine === undefined) throw new Error('no OpenTofu/Terraform: these tests are skipped');
      return engine;
    };
    const placeholder: ModuleUnderTest = {
      label: 'the placeholder module',
      prefix: 'setup',
      dir: PLACEHOLDER,
      resource: 'terraform_data',
      createsVpc: false,
      emulatorDrift: [],
    };
    const real = engine === undefined ? undefined : realModuleUnderTest(engine);
    if (typeof real === 'object')
      afterAll(() => fs.rmSync(real.dir, { recursive: true, force: true }));
    const realUnusable = typeof real === 'string' ? real : undefined;
    /**
     * Registers `body` for the placeholder module and for the real one (`$label` in `title` names
     * it); the real module's test is skipped, with the SKIPPED line, where it cannot run here.
     */
    const eachModule = (
      title: string,
      body: (module: ModuleUnderTest) => Promise<void>,
      timeout: number,
    ): void => {
      it(title.replace('$label', placeholder.label), () => body(placeholder), timeout);
      itIf(
        realUnusable === undefined,
        'infra-e2e',
        `setup with the real infra/aws module: ${realUnusable ?? ''}`,
      )(
        title.replace('$label', 'the real infra/aws module'),
        () => {
          if (typeof real !== 'object')
            throw new Error('the real infra/aws module is not available');
          return body(real);
        },
        timeout,
      );
    };

    eachModule(
      'sets up $label with the real engine: dependencies, state, inputs, create-only CAs; re-setup changes nothing beyond the emulator’s read-back gaps; teardown and destroy clean up',
      async (module) => {
        const cluster = `${module.prefix}-${RUN}`;
        const secrets = [`/${cluster}/_system/cluster-ca`, `/${cluster}/_system/workload-ca-key`];
        await inModuleCluster(module, cluster, 'podmin-setup-e2e', async (sandbox, bucket) => {
          const setupArgs = ['setup', '--vpc-cidr', '10.0.0.0/16', '--nodegroup', 'default', '-y'];

          const first = await sandbox.run(setupArgs);
          expect(first.stderr).toContain(`Cluster ${cluster} is set up`);
          expect(first.code).toBe(0);
          expect(first.stderr).toContain(`Debian 13 arm64 AMI: ${amis.arm64}`);
          for (const name of secrets)
            expect(first.stderr).toContain(`Stored ${name} (create-only)`);

          // Dependencies published: the manifest lists arm64 files and the seeded pause image.
          const keys = await listKeys(bucket);
          const manifest = JSON.parse(await readObject(bucket, 'dependencies/manifest.json')) as {
            dependencies: Record<string, Record<string, { path: string; version: string }>>;
            images: Record<string, { source: string; digest: string; path: string }>;
          };
          const containerd = manifest.dependencies['containerd']?.['arm64'];
          expect(containerd?.version).toBe('2.1.5');
          expect(keys).toContain(containerd?.path);
          expect(manifest.images['pause']?.source).toBe(PAUSE);
          // No NAT64, no Jool, and Debian's image manifests were not read.
          expect(manifest.dependencies['jool']).toBeUndefined();
          expect(upstream.requests.some((r) => r.startsWith('/debian/'))).toBe(false);
          expect(keys).toContain(`${manifest.images['pause']?.path}/index.json`);

          // State and inputs in the bucket; the inputs carry the registered AMI and the first zone.
          expect(keys).toEqual(expect.arrayContaining([STATE, TFVARS]));
          const state = await readObject(bucket, STATE);
          const tfvars = await readObject(bucket, TFVARS);
          const vars = JSON.parse(tfvars) as {
            amis: Record<string, string>;
            nodegroups: Record<string, { zone: string; arch: string; user_data: string }>;
          };
          expect(vars.amis).toEqual({ arm64: amis.arm64 });
          expect(vars.nodegroups['default']).toMatchObject({ zone: 'us-east-1a', arch: 'arm64' });
          expect(vars.nodegroups['default']?.user_data).toContain(containerd?.path);
          expect(JSON.parse(state)).toMatchObject({ resources: expect.any(Array) });
          expect(state).toContain(`"${module.resource}"`);
          const vpcId = (JSON.parse(state) as { outputs: { vpc_id?: { value: string } } }).outputs
            .vpc_id?.value;
          if (module.createsVpc) {
            const vpcs = await ec2.send(new DescribeVpcsCommand({ VpcIds: [vpcId!] }));
            expect(vpcs.Vpcs?.[0]?.CidrBlock).toBe('10.0.0.0/16');
          }

          // Both CAs exist, and neither the state, the inputs nor the work directory holds them.
          const secretValues: string[] = [];
          for (const name of secrets) {
            const param = await ssm.send(
              new GetParameterCommand({ Name: name, WithDecryption: true }),
            );
            expect(param.Parameter?.Type).toBe('SecureString');
            secretValues.push(param.Parameter!.Value!);
          }
          const workDir = path.join(
            sandbox.env['XDG_CACHE_HOME']!,
            'podmin/infrastructure',
            cluster,
          );
          const workFiles = fs
            .readdirSync(workDir)
            .filter((f) => fs.statSync(path.join(workDir, f)).isFile())
            .map((f) => fs.readFileSync(path.join(workDir, f), 'utf8'));
          for (const text of [state, tfvars, ...workFiles]) {
            expect(text).not.toContain('PRIVATE KEY');
            for (const value of secretValues) expect(text).not.toContain(value);
          }

          // The work directory under the cache holds the module and the same inputs.
          for (const name of fs.readdirSync(module.dir)) {
            expect(fs.readFileSync(path.join(workDir, name), 'utf8')).toBe(
              fs.readFileSync(path.join(module.dir, name), 'utf8'),
            );
          }
          expect(fs.readFileSync(path.join(workDir, 'podmin.auto.tfvars.json'), 'utf8')).toBe(
            tfvars,
          );
          expect(fs.existsSync(path.join(workDir, '.terraform'))).toBe(true);

          // A second setup changes nothing (no apply, same state) but the emulator's known
          // read-back gaps, which are exactly what it updates; the CAs are kept.
          const serial = (JSON.parse(state) as { serial: number }).serial;
          const second = await sandbox.run(setupArgs);
          expect(second.code).toBe(0);
          for (const name of secrets) expect(second.stderr).toContain(`Kept existing ${name}`);
          if (module.emulatorDrift.length === 0) {
            expect(second.stderr).toContain(`The infrastructure of ${cluster} is up to date`);
            expect(second.stderr).not.toContain('is set up');
            expect((JSON.parse(await readObject(bucket, STATE)) as { serial: number }).serial).toBe(
              serial,
            );
          } else {
            const planned = [
              ...second.stderr.matchAll(/^\s*# (\S+) (will be|must be) (.+)$/gm),
            ].map((m) => `${m[1]} ${m[3]}`);
            expect(planned.sort()).toEqual(
              module.emulatorDrift.map((a) => `${a} updated in-place`).sort(),
            );
            expect(second.stderr).toContain(`Cluster ${cluster} is set up`);
          }
          for (const [i, name] of secrets.entries()) {
            const param = await ssm.send(
              new GetParameterCommand({ Name: name, WithDecryption: true }),
            );
            expect(param.Parameter?.Value).toBe(secretValues[i]);
          }

          const teardown = await sandbox.run(['teardown', '-y']);
          expect(teardown.stderr).toContain(`Tore down ${cluster}`);
          expect(teardown.code).toBe(0);
          expect(await readObject(bucket, STATE)).not.toContain(`"${module.resource}"`);
          if (module.createsVpc) {
            await expect(
              ec2.send(new DescribeVpcsCommand({ VpcIds: [vpcId!] })),
            ).rejects.toMatchObject({ name: 'InvalidVpcID.NotFound' });
          }
          expect(await listKeys(bucket)).toContain('dependencies/manifest.json');

          const destroy = await sandbox.run(['destroy', '-y']);
          expect(destroy.stderr).toContain(`Destroyed ${cluster} and removed its context`);
          expect(destroy.code).toBe(0);
          await expect(s3.send(new HeadBucketCommand({ Bucket: bucket }))).rejects.toMatchObject({
            $metadata: { httpStatusCode: 404 },
          });
          for (const name of secrets) {
            await expect(ssm.send(new GetParameterCommand({ Name: name }))).rejects.toMatchObject({
              name: 'ParameterNotFound',
            });
          }
        });
      },
      600_000,
    );

    eachModule(
      'sets up $label with shared and dedicated NAT64: Jool mirrored for each AMI kernel, a new launch generation on every setup',
      async (module) => {
        const cluster = `nat-${module.prefix}-${RUN}`;
        await inModuleCluster(module, cluster, 'podmin-nat64-e2e', async (sandbox, bucket) => {
          // The shared translator is amd64 (t3), the edge group's dedicated one arm64 (t4g).
          const setupArgs = [
            'setup',
            '--vpc-cidr',
            '10.64.0.0/16',
            '--nat64=instance-type=t3.nano',
            '--nodegroup',
            'default',
            '--nodegroup',
            'edge,zone=b,nat64=t4g.nano',
            '-y',
          ];
          const first = await sandbox.run(setupArgs);
          expect(first.stderr).toContain(`Cluster ${cluster} is set up`);
          expect(first.code).toBe(0);
          for (const arch of ['amd64', 'arm64']) {
            expect(first.stderr).toContain(
              `NAT64 ${arch}: debian-13-${arch}-${DEBIAN_BUILD} boots kernel ${KERNEL_ABI}-cloud-${arch}`,
            );
            expect(upstream.requests).toContain(
              `/debian/trixie/${DEBIAN_BUILD}/debian-13-ec2-${arch}-${DEBIAN_BUILD}.json`,
            );
          }

          // Only the matching archives (4.1.15 for this kernel) are mirrored, one per architecture,
          // and recorded where the NAT64 user data reads them.
          const manifest = JSON.parse(await readObject(bucket, 'dependencies/manifest.json')) as {
            dependencies: Record<
              string,
              Record<string, { path: string; version: string; digest: string }>
            >;
          };
          const keys = await listKeys(bucket);
          for (const arch of ['amd64', 'arm64']) {
            const jool = manifest.dependencies['jool']?.[arch];
            expect(jool?.version).toBe(`4.1.15-${KERNEL_ABI}`);
            expect(jool?.path).toBe(
              `dependencies/jool/jool-v4.1.15-${KERNEL_ABI}-linux-${arch}.tar.gz`,
            );
            expect(jool?.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
            expect(keys).toContain(jool?.path);
          }
          expect(keys.filter((k) => k.startsWith('dependencies/jool/'))).toHaveLength(2);
          // The NodeGroups are arm64 only: no amd64 node dependency was published.
          expect(manifest.dependencies['containerd']?.['amd64']).toBeUndefined();

          const vars = JSON.parse(await readObject(bucket, TFVARS)) as {
            amis: Record<string, string>;
            nat64: { instance_type: string; arch: string } | null;
            nat64_generation: string;
            nodegroups: Record<string, { nat64: { instance_type: string; arch: string } | null }>;
          };
          expect(vars.amis).toEqual({ amd64: amis.amd64, arm64: amis.arm64 });
          expect(vars.nat64).toEqual({ instance_type: 't3.nano', arch: 'amd64' });
          expect(vars.nodegroups['default']?.nat64).toBeNull();
          expect(vars.nodegroups['edge']?.nat64).toEqual({
            instance_type: 't4g.nano',
            arch: 'arm64',
          });

          const second = await sandbox.run(setupArgs);
          expect(second.code).toBe(0);
          expect(second.stderr).toContain(`Cluster ${cluster} is set up`);
          const again = JSON.parse(await readObject(bucket, TFVARS)) as typeof vars;
          // Every setup starts a new NAT64 launch generation, so the translators are replaced.
          expect(again.nat64_generation).not.toBe(vars.nat64_generation);
          if (module.createsVpc) {
            const outputs = (
              JSON.parse(await readObject(bucket, STATE)) as {
                outputs: { nat64_asg_names?: { value: Record<string, string> } };
              }
            ).outputs;
            const translators = Object.keys(outputs.nat64_asg_names?.value ?? {}).sort();
            expect(translators).toHaveLength(2);
            expect(second.stderr).toMatch(
              /aws_launch_template\.nat64\["[^"]+"\] will be updated in-place/,
            );
          }
          // The published manifest still records the same archives; nothing was uploaded again.
          expect(JSON.parse(await readObject(bucket, 'dependencies/manifest.json'))).toEqual(
            manifest,
          );

          const destroy = await sandbox.run(['destroy', '-y']);
          expect(destroy.stderr).toContain(`Destroyed ${cluster} and removed its context`);
          expect(destroy.code).toBe(0);
        });
      },
      600_000,
    );

    it('refuses a bad --otel-logs as a usage error before anything is written', async () => {
      const cluster = `badotel-${RUN}`;
      const bucket = uniqueBucketName('podmin-badotel-e2e');
      const sandbox = await connectedSandbox(cluster, bucket, { TF_PLUGIN_CACHE_DIR: pluginCache });
      const run = await sandbox.run([
        'setup',
        '--vpc-cidr',
        '10.66.0.0/16',
        '--nodegroup',
        'default',
        '--otel-logs',
        'endpoint=http://otlp.example.com/v1/logs,ca=s3://trust-bucket/,colour=red',
        '-y',
      ]);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('--otel-logs: unknown key "colour"');
      expect(run.stderr).toContain(
        '--otel-logs endpoint: "http://otlp.example.com/v1/logs" is not an https:// URL',
      );
      expect(run.stderr).toContain('--otel-logs ca: "s3://trust-bucket/" is not s3://BUCKET/KEY');
      expect(await listKeys(bucket)).toEqual([]);
    }, 120_000);

    it('sets up --otel-logs: Fluent Bit 5 and libpq5 published with their index digests, the configuration in the inputs and user data', async () => {
      const cluster = `otel-${RUN}`;
      const module = placeholder;
      await inModuleCluster(module, cluster, 'podmin-otel-e2e', async (sandbox, bucket) => {
        const run = await sandbox.run([
          'setup',
          '--vpc-cidr',
          '10.67.0.0/16',
          '--nodegroup',
          'default',
          '--otel-logs',
          OTEL_LOGS_EXAMPLE.flag,
          '-y',
        ]);
        expect(run.stderr).toContain(`Cluster ${cluster} is set up`);
        expect(run.code).toBe(0);
        const manifest = JSON.parse(await readObject(bucket, 'dependencies/manifest.json')) as {
          dependencies: Record<
            string,
            Record<string, { path: string; version: string; digest: string; size: number }>
          >;
        };
        const fluentBit = manifest.dependencies['fluent-bit']?.['arm64'];
        const libpq = manifest.dependencies['libpq5']?.['arm64'];
        expect(fluentBit).toMatchObject({
          version: '5.0.10',
          path: 'dependencies/fluent-bit/fluent-bit-v5.0.10-linux-arm64.deb',
          digest: expect.stringMatching(/^sha512:[0-9a-f]{128}$/),
        });
        expect(libpq).toMatchObject({
          version: '17.6-0+deb13u1',
          path: 'dependencies/libpq5/libpq5-v17.6-0+deb13u1-linux-arm64.deb',
          digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
        });
        expect(await listKeys(bucket)).toEqual(
          expect.arrayContaining([fluentBit?.path, libpq?.path]),
        );
        const vars = JSON.parse(await readObject(bucket, TFVARS)) as {
          otel_logs: unknown;
          nodegroups: Record<string, { user_data: string }>;
        };
        expect(vars.otel_logs).toEqual(OTEL_LOGS_EXAMPLE.moduleInput);
        const userData = vars.nodegroups['default']?.user_data ?? '';
        expect(userData).toContain("otel_logs_endpoint='https://otlp.example.com/v1/logs'");
        expect(userData).toContain("otel_logs_headers_provider='aws-parameter-store'");
        // Each package row carries its exact size too, checked on the node before dpkg.
        expect(userData).toContain(`'libpq5.deb|${libpq?.path}|${libpq?.digest}|${libpq?.size}'`);
        expect(userData).toContain(
          `'fluent-bit.deb|${fluentBit?.path}|${fluentBit?.digest}|${fluentBit?.size}'`,
        );
        const destroyed = await sandbox.run(['destroy', '-y']);
        expect(destroyed.code).toBe(0);
      });
    }, 300_000);

    it('stops before writing anything when no Jool build matches the NAT64 AMI’s kernel yet', async () => {
      const cluster = `nojool-${RUN}`;
      const bucket = uniqueBucketName('podmin-nojool-e2e');
      const sandbox = await connectedSandbox(cluster, bucket, { TF_PLUGIN_CACHE_DIR: pluginCache });
      await seedPauseImage(sandbox);
      // Debian rebuilt the arm64 image with a kernel jool-builds has not published for.
      upstream.addDebianImage(DEBIAN_BUILD, 'arm64', '6.12.99+deb13-cloud-arm64');
      try {
        const run = await sandbox.run([
          'setup',
          '--vpc-cidr',
          '10.65.0.0/16',
          '--nat64',
          '--nodegroup',
          'default',
          '-y',
        ]);
        expect(run.code).toBe(1);
        expect(run.stderr).toContain(
          'podplane/jool-builds has no stable Jool 4 release for kernel 6.12.99+deb13-cloud-arm64',
        );
        // Nothing was published, no inputs or state were written, no secret was stored.
        expect(await listKeys(bucket)).toEqual([]);
        await expect(
          ssm.send(new GetParameterCommand({ Name: `/${cluster}/_system/cluster-ca` })),
        ).rejects.toMatchObject({ name: 'ParameterNotFound' });
      } finally {
        upstream.addDebianImage(DEBIAN_BUILD, 'arm64', `${KERNEL_ABI}-cloud-arm64`);
        await sandbox.run(['destroy', '-y']);
      }
    }, 300_000);

    it('leaves the state usable after the real engine is interrupted mid-apply: the next setup completes', async () => {
      const bucket = uniqueBucketName('podmin-cut-e2e');
      // Stand-in engine for this failure path only: the real engine, sent SIGINT (Ctrl-C) as soon
      // as its apply starts creating resources; it always reports the apply as interrupted.
      const binDir = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-cut-engine-'));
      const standIn = path.join(binDir, 'tofu-interrupted');
      fs.writeFileSync(
        standIn,
        [
          '#!/usr/bin/env bash',
          'if [[ ${1:-} != apply ]]; then exec "$REAL_TF" "$@"; fi',
          'fifo="$(mktemp -u)" && mkfifo "$fifo"',
          '"$REAL_TF" "$@" >"$fifo" 2>&1 & pid=$!',
          "sent=''",
          'while IFS= read -r line; do',
          '  printf "%s\\n" "$line"',
          '  if [[ -z $sent && $line == *Creating...* ]]; then kill -INT "$pid"; sent=1; fi',
          'done <"$fifo"',
          'wait "$pid"; rc=$?',
          'rm -f "$fifo"',
          'echo "stand-in: apply interrupted (engine exit ${rc}, SIGINT sent: ${sent:-no})" >&2',
          'exit 130',
          '',
        ].join('\n'),
        { mode: 0o755 },
      );
      try {
        const sandbox = await connectedSandbox(CUT_CLUSTER, bucket, {
          PODMIN_TF_CMD: standIn,
          REAL_TF: tf().executable,
        });
        await seedPauseImage(sandbox);
        const setupArgs = ['setup', '--vpc-cidr', '10.0.0.0/16', '--nodegroup', 'default', '-y'];
        const cut = await sandbox.run(setupArgs);
        expect(cut.stderr).toContain('SIGINT sent: 1');
        expect(cut.stderr).toMatch(/^Error: .*apply/m);
        expect(cut.code).toBe(1);
        expect(await listKeys(bucket)).not.toContain(`${STATE}.tflock`);

        const resumed = await sandbox.run(setupArgs, { PODMIN_TF_CMD: tf().executable });
        // Whatever the interrupted apply recorded, the next setup completes from that state.
        expect(resumed.stderr).toMatch(
          new RegExp(
            `Cluster ${CUT_CLUSTER} is set up|The infrastructure of ${CUT_CLUSTER} is up to date`,
          ),
        );
        expect(resumed.code).toBe(0);
        expect(await listKeys(bucket)).not.toContain(`${STATE}.tflock`);
        const state = JSON.parse(await readObject(bucket, STATE)) as {
          resources: Array<{ type: string; name: string }>;
        };
        expect(state.resources.map((r) => `${r.type}.${r.name}`).sort()).toEqual([
          'terraform_data.network',
          'terraform_data.nodegroup',
        ]);
        const again = await sandbox.run(setupArgs, { PODMIN_TF_CMD: tf().executable });
        expect(again.stderr).toContain(`The infrastructure of ${CUT_CLUSTER} is up to date`);

        const destroyed = await sandbox.run(['destroy', '-y'], { PODMIN_TF_CMD: tf().executable });
        expect(destroyed.code).toBe(0);
      } finally {
        fs.rmSync(binDir, { recursive: true, force: true });
      }
    }, 300_000);
  });
});
