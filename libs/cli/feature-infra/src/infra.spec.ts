import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RecordingReporter } from '@podmin/cli-util-io';
import { InMemoryObjectStore, OTEL_LOGS_EXAMPLE, dependencyManifest } from '@podmin/testing';
import { ValidationError } from '@podmin/util-errors';
import type { Arch } from '@podmin/util-dependencies';
import {
  TFVARS_OBJECT_KEY,
  parseSetupFlags,
  type ImageFacts,
  type InstanceTypeFacts,
  type ModuleVars,
  type VpcFacts,
} from '@podmin/cli-util-infra';
import { StateLockedError, type BackendConfig } from '@podmin/cli-data-access-infra-engine';
import type { DestroyDeps, Engine, ProviderCatalog, SetupDeps } from './infra.ports';
import { setupAwsCluster } from './setup';
import { destroyAwsCluster, teardownAwsCluster } from './teardown';

const TYPES: InstanceTypeFacts[] = [
  {
    instanceType: 't4g.small',
    architectures: ['arm64'],
    hypervisor: 'nitro',
    ipv6Supported: true,
    maxNetworkInterfaces: 3,
  },
  {
    instanceType: 't4g.nano',
    architectures: ['arm64'],
    hypervisor: 'nitro',
    ipv6Supported: true,
    maxNetworkInterfaces: 2,
  },
  {
    instanceType: 'c7i.large',
    architectures: ['x86_64'],
    hypervisor: 'nitro',
    ipv6Supported: true,
    maxNetworkInterfaces: 3,
  },
  {
    instanceType: 't2.micro',
    architectures: ['x86_64'],
    hypervisor: 'xen',
    ipv6Supported: true,
    maxNetworkInterfaces: 2,
  },
];

/** Hand-written ProviderCatalog fake with a fixed region world; records calls. */
class FakeCatalog implements ProviderCatalog {
  calls: string[] = [];
  vpcs: VpcFacts[] = [];
  availableZones() {
    this.calls.push('zones');
    return Promise.resolve(['us-west-2a', 'us-west-2b', 'us-west-2c']);
  }
  instanceTypes(names: readonly string[]) {
    this.calls.push('types');
    return Promise.resolve(
      new Map(TYPES.filter((t) => names.includes(t.instanceType)).map((t) => [t.instanceType, t])),
    );
  }
  debianImages(arch: Arch, owner: string): Promise<ImageFacts[]> {
    this.calls.push(`images ${arch} ${owner}`);
    return Promise.resolve([
      {
        imageId: `ami-${arch}-old`,
        name: `debian-13-${arch}-20250101-1`,
        creationDate: '2025-01-01',
      },
      {
        imageId: `ami-${arch}-new`,
        name: `debian-13-${arch}-20250601-1`,
        creationDate: '2025-06-01',
      },
    ]);
  }
  vpcsByPrimaryCidr() {
    this.calls.push('vpcs');
    return Promise.resolve(this.vpcs);
  }
}

/** Hand-written Engine fake: records each step; can fail one step with a stale lock. */
class FakeEngine implements Engine {
  readonly executable = '/usr/bin/tofu';
  steps: string[] = [];
  lockedStep: string | undefined;
  changes = true;
  constructor(readonly workDir: string) {}
  private step(name: string) {
    this.steps.push(name);
    if (this.lockedStep === name) {
      this.lockedStep = undefined;
      return Promise.reject(new StateLockedError('lock-123', this.executable, this.workDir, name));
    }
    return Promise.resolve();
  }
  version() {
    this.steps.push('version');
    return Promise.resolve('1.11.2');
  }
  init(backend: BackendConfig) {
    return this.step(`init ${backend.bucket}/${backend.key}`);
  }
  async plan(file: string, options: { destroy?: boolean } = {}) {
    await this.step(`plan${options.destroy ? ' -destroy' : ''} ${file}`);
    return this.changes;
  }
  apply(file: string) {
    return this.step(`apply ${file}`);
  }
  forceUnlock(id: string) {
    return this.step(`force-unlock ${id}`);
  }
}

describe('AWS infrastructure flows', () => {
  let dir: string;
  let reporter: RecordingReporter;
  let store: InMemoryObjectStore;
  let engine: FakeEngine;
  let catalog: FakeCatalog;
  let events: string[];

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-infra-'));
    reporter = new RecordingReporter();
    reporter.answer = true;
    store = new InMemoryObjectStore();
    engine = new FakeEngine(path.join(dir, 'infrastructure', 'demo'));
    catalog = new FakeCatalog();
    events = [];
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const base = () => ({
    reporter,
    cluster: 'demo',
    region: 'us-west-2',
    bucket: 'podmin-demo-abc',
    store,
    engine,
    moduleFiles: [{ name: 'main.tf', content: 'terraform {}\n' }],
    assumeYes: false,
    interactive: true,
  });
  const setupDeps = (overrides: Partial<SetupDeps> = {}): SetupDeps => ({
    ...base(),
    catalog,
    amiOwner: '136693071363',
    nat64Kernel: (arch, imageName) => {
      events.push(`kernel ${arch} ${imageName}`);
      return Promise.resolve({
        arch,
        imageName,
        kernelRelease: `6.12.48+deb13-cloud-${arch}`,
        kernelAbi: '6.12.48+deb13',
      });
    },
    syncDependencies: (archs, kernels, otelLogs) => {
      events.push(
        `sync ${archs.join(',')} jool ${kernels.map((k) => `${k.arch}:${k.kernelRelease}`).join(',') || '-'}${otelLogs ? ' otel-logs' : ''}`,
      );
      return Promise.resolve(dependencyManifest({ otel: otelLogs }));
    },
    secretsProvider: 'aws-parameter-store',
    storeSystemSecrets: () => {
      events.push('secrets');
      return Promise.resolve();
    },
    newGeneration: () => 'gen-1',
    ...overrides,
  });
  const flags = (...nodegroup: string[]) =>
    parseSetupFlags({ vpcCidr: '10.0.0.0/16', nodegroup, nat64: '' });
  const workVars = (): ModuleVars =>
    JSON.parse(
      fs.readFileSync(path.join(engine.workDir, 'podmin.auto.tfvars.json'), 'utf8'),
    ) as ModuleVars;

  it('sets up: checks, syncs, writes inputs locally and to the bucket, stores CAs, plans, confirms, applies', async () => {
    await setupAwsCluster(
      flags('default', 'workers,size=3,instance-type=c7i.large,zone=b,nat64=t4g.nano'),
      setupDeps(),
    );
    expect(engine.steps).toEqual([
      'version',
      'init podmin-demo-abc/tfstate/podmin.tfstate',
      'plan setup.tfplan',
      'apply setup.tfplan',
    ]);
    // The dedicated NAT64 (t4g, arm64) needs Jool for the arm64 AMI's kernel.
    expect(events).toEqual([
      'kernel arm64 debian-13-arm64-20250601-1',
      'sync amd64,arm64 jool arm64:6.12.48+deb13-cloud-arm64',
      'secrets',
    ]);
    expect(reporter.infos).toContain(
      'NAT64 arm64: debian-13-arm64-20250601-1 boots kernel 6.12.48+deb13-cloud-arm64',
    );
    expect(catalog.calls).toEqual([
      'zones',
      'types',
      'images amd64 136693071363',
      'images arm64 136693071363',
      'vpcs',
    ]);
    const vars = workVars();
    expect(vars).toMatchObject({
      cluster: 'demo',
      existing_vpc_id: null,
      amis: { amd64: 'ami-amd64-new', arm64: 'ami-arm64-new' },
      nat64: { instance_type: 't4g.nano', arch: 'arm64' },
      nat64_generation: 'gen-1',
    });
    expect(vars.nodegroups['default']).toMatchObject({
      zone: 'us-west-2a',
      arch: 'arm64',
      size: 1,
      disk_size: 20,
      nat64: null,
    });
    expect(vars.nodegroups['workers']).toMatchObject({
      zone: 'us-west-2b',
      arch: 'amd64',
      size: 3,
      nat64: { instance_type: 't4g.nano', arch: 'arm64' },
    });
    expect(vars.nodegroups['workers']!.user_data).toContain("nodegroup='workers'");
    expect(vars.nodegroups['workers']!.user_data).toContain("arch='amd64'");
    const uploaded = (await store.get(TFVARS_OBJECT_KEY)).body.toString();
    expect(uploaded).toBe(
      fs.readFileSync(path.join(engine.workDir, 'podmin.auto.tfvars.json'), 'utf8'),
    );
    expect(fs.readFileSync(path.join(engine.workDir, 'main.tf'), 'utf8')).toBe('terraform {}\n');
  });

  it('reuses a compatible untagged VPC', async () => {
    catalog.vpcs = [
      {
        vpcId: 'vpc-9',
        cidr: '10.0.0.0/16',
        tags: {},
        dnsSupport: true,
        dnsHostnames: true,
        ipv6Blocks: [{ cidr: '2600::/56', pool: 'Amazon' }],
        subnets: [],
      },
    ];
    await setupAwsCluster(flags('default'), setupDeps());
    expect(workVars().existing_vpc_id).toBe('vpc-9');
  });

  it('hands --workload-ca-publish to the module (policies) and to every NodeGroup user data (agent)', async () => {
    await setupAwsCluster(
      parseSetupFlags({
        vpcCidr: '10.0.0.0/16',
        nodegroup: ['default', 'workers,zone=b'],
        workloadCaPublish: 's3://example-trust/podmin/demo/ca.pem',
      }),
      setupDeps(),
    );
    const vars = workVars();
    expect(vars.workload_ca_publish).toEqual({
      bucket: 'example-trust',
      key: 'podmin/demo/ca.pem',
    });
    for (const name of ['default', 'workers']) {
      expect(vars.nodegroups[name]!.user_data).toContain(
        "workload_ca_publish='s3://example-trust/podmin/demo/ca.pem'",
      );
    }
  });

  it('writes a null workload_ca_publish and an empty user-data value without the flag', async () => {
    await setupAwsCluster(flags('default'), setupDeps());
    const vars = workVars();
    expect(vars.workload_ca_publish).toBeNull();
    expect(vars.nodegroups['default']!.user_data).toContain("workload_ca_publish=''");
    // Without --otel-logs: null inputs, no log export packages synced or installed.
    expect(vars.otel_logs).toBeNull();
    // The script always carries log export's code and defaults; no log export value is
    // rendered (rendered values are single-quoted: `otel_logs_endpoint='…'`).
    const userData = vars.nodegroups['default']!.user_data;
    expect(userData).toMatch(/^otel_logs_endpoint="\$\{otel_logs_endpoint:-\}"$/m);
    expect(userData).not.toMatch(/^otel_logs_\w+='|^otel_logs_packages=\(/m);
    expect(events).toContain('sync arm64 jool arm64:6.12.48+deb13-cloud-arm64');
  });

  it('hands --otel-logs to the sync, the module inputs and every NodeGroup user data', async () => {
    await setupAwsCluster(
      parseSetupFlags({
        vpcCidr: '10.0.0.0/16',
        nodegroup: ['default', 'workers,zone=b'],
        otelLogs: OTEL_LOGS_EXAMPLE.flag,
      }),
      setupDeps({ secretsProvider: 'aws-secrets-manager' }),
    );
    expect(events).toContain('sync arm64 jool - otel-logs');
    const vars = workVars();
    expect(vars.otel_logs).toEqual(OTEL_LOGS_EXAMPLE.moduleInput);
    for (const name of ['default', 'workers']) {
      const userData = vars.nodegroups[name]!.user_data;
      expect(userData).toContain("otel_logs_endpoint='https://otlp.example.com/v1/logs'");
      expect(userData).toMatch(/^otel_logs_\w+='|^otel_logs_packages=\(/m);
      expect(userData).toContain("otel_logs_ca='s3://example-trust/otel/ca.pem'");
      expect(userData).toContain("otel_logs_headers_provider='aws-secrets-manager'");
      expect(userData).toMatch(
        /otel_logs_packages=\(\n {2}'libpq5\.deb\|dependencies\/libpq5\/[^\n]+\n {2}'fluent-bit\.deb\|/,
      );
    }
  });

  it('refuses headers-secret=true when nodes cannot read the context secrets provider', async () => {
    await expect(
      setupAwsCluster(
        parseSetupFlags({
          vpcCidr: '10.0.0.0/16',
          nodegroup: ['default'],
          otelLogs: 'endpoint=https://otlp.example.com/v1/logs,headers-secret=true',
        }),
        setupDeps({ secretsProvider: 'local' }),
      ),
    ).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      problems: [expect.objectContaining({ field: '--otel-logs headers-secret' })],
    });
    expect(events).toEqual([]);
  });

  it('reports every provider problem before writing or syncing anything', async () => {
    let caught: unknown;
    try {
      await setupAwsCluster(
        flags('a,instance-type=t2.micro', 'b,zone=z', 'c,instance-type=x9.huge'),
        setupDeps(),
      );
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ValidationError);
    const text = (caught as Error).message;
    expect(text).toContain('t2.micro is not a Nitro instance type');
    expect(text).toContain(
      'z is not an available zone of us-west-2; available: us-west-2a, us-west-2b, us-west-2c',
    );
    expect(text).toContain('x9.huge is not an instance type EC2 offers in us-west-2');
    expect(events).toEqual([]);
    expect(engine.steps).toEqual(['version']);
    expect((await store.list('')).objects).toHaveLength(0);
    expect(fs.existsSync(engine.workDir)).toBe(false);
  });

  it('fails at once without a terminal and without -y', async () => {
    await expect(
      setupAwsCluster(flags('default'), setupDeps({ interactive: false })),
    ).rejects.toThrow(/confirmation is required and there is no terminal to ask on/);
    expect(engine.steps).toEqual([]);
    expect(events).toEqual([]);
  });

  it('applies nothing when the plan is declined', async () => {
    reporter.answer = false;
    await expect(setupAwsCluster(flags('default'), setupDeps())).rejects.toThrow(
      /cancelled; nothing was changed/,
    );
    expect(engine.steps).not.toContain('apply setup.tfplan');
  });

  it('offers force-unlock for a stale lock on a terminal and retries', async () => {
    engine.lockedStep = 'plan setup.tfplan';
    await setupAwsCluster(flags('default'), setupDeps());
    expect(engine.steps.slice(-4)).toEqual([
      'plan setup.tfplan',
      'force-unlock lock-123',
      'plan setup.tfplan',
      'apply setup.tfplan',
    ]);
    expect(reporter.warnings.join('\n')).toContain('lock ID lock-123');
  });

  it('never forces a lock with -y: it prints the command and fails', async () => {
    engine.lockedStep = 'plan setup.tfplan';
    await expect(
      setupAwsCluster(flags('default'), setupDeps({ assumeYes: true })),
    ).rejects.toBeInstanceOf(StateLockedError);
    expect(engine.steps).not.toContain('force-unlock lock-123');
    expect(reporter.infos.join('\n')).toContain(
      `/usr/bin/tofu -chdir=${engine.workDir} force-unlock lock-123`,
    );
  });

  it('tears down from the bucket’s inputs when the work directory is gone (after disconnect)', async () => {
    await setupAwsCluster(flags('default'), setupDeps());
    fs.rmSync(engine.workDir, { recursive: true });
    engine.steps = [];
    await teardownAwsCluster(base());
    expect(engine.steps).toEqual([
      'version',
      'init podmin-demo-abc/tfstate/podmin.tfstate',
      'plan -destroy teardown.tfplan',
      'apply teardown.tfplan',
    ]);
    expect(workVars().cluster).toBe('demo');
    expect((await store.get(TFVARS_OBJECT_KEY)).body.length).toBeGreaterThan(0);
  });

  it('has nothing to tear down before any setup', async () => {
    await teardownAwsCluster(base());
    expect(engine.steps).toEqual([]);
    expect(reporter.infos.join('\n')).toContain('demo has no infrastructure to tear down');
  });

  const destroyDeps = (overrides: Partial<DestroyDeps> = {}): DestroyDeps => ({
    ...base(),
    deleteSystemSecrets: () => {
      events.push('delete secrets');
      return Promise.resolve();
    },
    deleteBucket: async () => {
      events.push(`delete bucket (${(await store.list('')).objects.length} objects left)`);
    },
    removeContext: () => {
      events.push('remove context');
      return Promise.resolve();
    },
    ...overrides,
  });

  it('destroys infrastructure, secrets, every object and the bucket, then the context', async () => {
    await setupAwsCluster(flags('default'), setupDeps());
    await store.put('apps/x/index.json', '{}');
    engine.steps = [];
    events = [];
    await destroyAwsCluster(destroyDeps());
    expect(engine.steps).toContain('apply teardown.tfplan');
    expect(events).toEqual(['delete secrets', 'delete bucket (0 objects left)', 'remove context']);
  });

  it('keeps secrets, bucket and context when the engine fails', async () => {
    await setupAwsCluster(flags('default'), setupDeps());
    events = [];
    engine.lockedStep = 'plan -destroy teardown.tfplan';
    await expect(destroyAwsCluster(destroyDeps({ assumeYes: true }))).rejects.toBeInstanceOf(
      StateLockedError,
    );
    expect(events).toEqual([]);
    expect((await store.list('')).objects.length).toBeGreaterThan(0);
  });
});
