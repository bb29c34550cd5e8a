// The boot test (issue 15): a node boots the way an AWS VM does, from real parts. The
// dependency set is published into the S3 emulator by setup's own code path (resolver, download
// cache, sync) from a loopback upstream serving stand-ins of the large dependencies (right
// layout, true digests) plus the real agent artifact and a real Node.js; the amd64 user-data is
// rendered from the published manifest and its main runs for real in a throwaway root, in a
// private mount and network namespace (tools/boot/node-namespace.sh), with the real AWS CLI
// from PyPI syncing from the emulator and an IMDS and EC2 emulator on the namespace's
// loopback; then the installed agent starts exactly as the rendered podmin-agent.service says
// and must be healthy, serve the registry and turn a `podmin deploy` into a static Pod.
// Once with the published agent, once with `--agent-source` (built from this checkout).
// The first boot also has `setup --otel-logs`: stand-in libpq5 and Fluent Bit packages, real
// .debs built with dpkg-deb, are resolved from loopback apt indexes and published with their
// true digests; user-data verifies them and the real dpkg installs them (into the throwaway
// root) libpq5 first; fluent-bit.service's ExecStartPre then runs as the unit says against the
// emulator's headers secret; and a digest mismatch stops bootstrap before dpkg runs. Fluent
// Bit itself cannot be obtained here, so nothing runs it.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { AgentArtifact, ImageMirror } from '@podmin/cli-data-access-dependencies';
import { renderAwsUserDataGzip } from '@podmin/cli-util-userdata';
import { createSsmClient, ParameterStoreSecretStore } from '@podmin/data-access-secrets';
import {
  type AwsEmulator,
  daemonSetManifest,
  describeUnless,
  FakeUpstream,
  getAwsEmulator,
  uniqueBucketName,
} from '@podmin/testing';
import type { DependencyManifest } from '@podmin/util-dependencies';
import { deployArgs, makeSandbox } from './cli-harness';

const REPO = path.resolve(__dirname, '../../../..');
const BOOT = path.join(REPO, 'tools/boot');
const VERSION = (
  JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as {
    version: string;
  }
).version;
const ARTIFACT = path.join(REPO, `dist/artifact/podmin-agent-v${VERSION}.tar.gz`);
/** Where the S3/SSM emulator appears inside the node namespace (through the bridge). */
const NODE_S3_PORT = 4566;
const PRIMARY_MAC = '0e:00:00:00:00:01';
const SECONDARY_MAC = '0e:00:00:00:00:02';
const NODE_ADDRESS = '2600:1f14:aaaa:bb01::10';
const POD_PREFIX = '2600:1f14:aaaa:bb01:1234::/80';

/** Why this machine cannot run the boot test, or undefined when it can. */
function unusable(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root for mount and network namespaces';
  for (const tool of [
    'unshare',
    'nsenter',
    'ip',
    'jq',
    'tar',
    'bzip2',
    'xz',
    'curl',
    'python3',
    'dpkg',
    'dpkg-deb',
  ]) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0)
      return `${tool} is not installed`;
  }
  if (spawnSync('unshare', ['-m', '-n', 'true']).status !== 0)
    return 'unshare -m -n fails here (no CAP_SYS_ADMIN?)';
  return undefined;
}

/** A gzip (z), bzip2 (j) or xz (J) tar of `files` (name → content, mode 0755), by real tar. */
function tarball(
  dir: string,
  name: string,
  flag: 'z' | 'j' | 'J',
  files: Record<string, string | Buffer>,
): Buffer {
  const src = fs.mkdtempSync(path.join(dir, 'src-'));
  for (const [file, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(src, file)), { recursive: true });
    fs.writeFileSync(path.join(src, file), content, { mode: 0o755 });
  }
  const out = path.join(dir, name);
  execFileSync(
    'tar',
    [`-c${flag}f`, out, '--owner=0', '--group=0', '-C', src, ...Object.keys(files)],
    {
      env: { ...process.env, XZ_OPT: '-0 -T2' },
    },
  );
  fs.rmSync(src, { recursive: true, force: true });
  return fs.readFileSync(out);
}

/** A stand-in program: records that it is not the real one. */
const program = (name: string) => `#!/bin/sh\necho "${name} stand-in" >&2\nexit 1\n`;

/** Where each stand-in package's postinst records its name, below the root dpkg installs into. */
const POSTINST_LOG = 'var/log/podmin-boot-postinst.log';

/**
 * A real `.deb` of a stand-in package, built by dpkg-deb: `files` (path → content, mode 0755)
 * and a postinst appending the package's name to {@link POSTINST_LOG} in the root dpkg
 * installs into (`$DPKG_ROOT`), so the order dpkg configured them in is observable.
 */
function standInDeb(
  dir: string,
  name: string,
  version: string,
  depends: string | undefined,
  files: Record<string, string>,
): Buffer {
  const src = fs.mkdtempSync(path.join(dir, `deb-${name}-`));
  fs.mkdirSync(path.join(src, 'DEBIAN'));
  fs.writeFileSync(
    path.join(src, 'DEBIAN/control'),
    [
      `Package: ${name}`,
      `Version: ${version}`,
      'Architecture: amd64',
      'Maintainer: Podmin Tests <tests@podmin.invalid>',
      ...(depends === undefined ? [] : [`Depends: ${depends}`]),
      `Description: ${name} stand-in for the boot test`,
      '',
    ].join('\n'),
  );
  fs.writeFileSync(
    path.join(src, 'DEBIAN/postinst'),
    `#!/bin/sh\nset -e\necho ${name} >>"\${DPKG_ROOT:-}/${POSTINST_LOG}"\n`,
    { mode: 0o755 },
  );
  for (const [file, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(src, file)), { recursive: true });
    fs.writeFileSync(path.join(src, file), content, { mode: 0o755 });
  }
  const out = path.join(dir, `${name}.deb`);
  execFileSync('dpkg-deb', ['--root-owner-group', '--build', src, out], { stdio: 'ignore' });
  fs.rmSync(src, { recursive: true, force: true });
  return fs.readFileSync(out);
}

/** Versions greater than the fake indexes' own, so the resolver picks the stand-ins. */
const LIBPQ5_VERSION = '17.6-0+deb13u2';
const FLUENT_BIT_VERSION = '5.0.11';
const OTEL_ENDPOINT = 'https://otlp.example.com:4318/v1/logs';

/** Serves real-shaped stand-ins of every large dependency, the real Node.js and agent artifact. */
async function upstreamWithStandIns(work: string): Promise<FakeUpstream> {
  const upstream = await new FakeUpstream().start();
  const gh = (repo: string, tag: string, asset: string) => `/gh-dl/${repo}/${tag}/${asset}`;
  upstream.replaceArtifact(
    gh('containerd/containerd', 'v2.1.5', 'containerd-2.1.5-linux-amd64.tar.gz'),
    tarball(work, 'containerd.tar.gz', 'z', {
      'bin/containerd': program('containerd'),
      'bin/ctr': program('ctr'),
      'bin/containerd-shim-runc-v2': program('runc shim'),
    }),
  );
  upstream.replaceArtifact(
    '/gvisor/20260803.0/x86_64/gvisor.tar.bz2',
    tarball(work, 'gvisor.tar.bz2', 'j', {
      runsc: program('runsc'),
      'containerd-shim-runsc-v1': program('runsc shim'),
    }),
  );
  upstream.replaceArtifact(
    gh('containernetworking/plugins', 'v1.7.1', 'cni-plugins-linux-amd64-v1.7.1.tgz'),
    tarball(work, 'cni.tgz', 'z', {
      ptp: program('ptp'),
      'host-local': program('host-local'),
      loopback: program('loopback'),
    }),
  );
  upstream.replaceArtifact(
    '/k8s/release/v1.36.2/bin/linux/amd64/kubelet',
    Buffer.from(program('kubelet')),
  );
  upstream.replaceArtifact(
    gh('kubernetes-sigs/cri-tools', 'v1.36.0', 'crictl-v1.36.0-linux-amd64.tar.gz'),
    tarball(work, 'crictl.tar.gz', 'z', { crictl: program('crictl') }),
  );
  upstream.replaceArtifact(
    gh('coredns/coredns', 'v1.12.3', 'coredns_1.12.3_linux_amd64.tgz'),
    tarball(work, 'coredns.tgz', 'z', { coredns: program('coredns') }),
  );
  // The running Node.js, packed as nodejs.org lays out its Linux tarball.
  upstream.replaceArtifact(
    '/node/v24.11.1/node-v24.11.1-linux-x64.tar.xz',
    tarball(work, 'node.tar.xz', 'J', {
      'node-v24.11.1-linux-x64/bin/node': fs.readFileSync(process.execPath),
    }),
  );
  upstream.replaceArtifact(
    gh('podplane/podmin', `v${VERSION}`, `podmin-agent-v${VERSION}.tar.gz`),
    fs.readFileSync(ARTIFACT),
  );
  // setup --otel-logs: real packages in the publishers' apt indexes (Fluent Bit depends on
  // libpq5, so dpkg itself refuses them in the wrong order).
  upstream.addDebPackage('debian-archive', {
    package: 'libpq5',
    version: LIBPQ5_VERSION,
    architecture: 'amd64',
    body: standInDeb(work, 'libpq5', LIBPQ5_VERSION, undefined, {
      'usr/lib/x86_64-linux-gnu/libpq.so.5': 'libpq stand-in\n',
    }),
  });
  upstream.addDebPackage('fluentbit', {
    package: 'fluent-bit',
    version: FLUENT_BIT_VERSION,
    architecture: 'amd64',
    body: standInDeb(work, 'fluent-bit', FLUENT_BIT_VERSION, 'libpq5', {
      'opt/fluent-bit/bin/fluent-bit': program('fluent-bit'),
    }),
  });
  return upstream;
}

/** The pause image is not run here: a stand-in mirror records it as present. */
const pauseStandIn: ImageMirror = {
  resolve: () => Promise.resolve({ digest: `sha256:${'3'.repeat(64)}`, size: 1_090_874 }),
  ensurePublished: () => Promise.resolve('present'),
};

/** Lines of `key=value` pairs in a systemd unit section, as [key, value]. */
function unitEntries(unit: string): Array<[string, string]> {
  return unit
    .split('\n')
    .map((l) => /^([A-Za-z]+)=(.*)$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => [m[1] as string, m[2] as string]);
}

/** The single value of `key` in a unit; throws when it is absent or repeated. */
function unitValue(unit: string, key: string): string {
  const values = unitEntries(unit).filter(([k]) => k === key);
  if (values.length !== 1)
    throw new Error(`expected one ${key}= in the unit, got ${values.length}`);
  return (values[0] as [string, string])[1];
}

/** Parses an EnvironmentFile (KEY=VALUE lines). */
function environmentFile(text: string): Record<string, string> {
  return Object.fromEntries(
    text
      .split('\n')
      .map((l) => /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(l))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => [m[1] as string, m[2] as string]),
  );
}

/** Waits for `check` to return a value, or throws `what` with `detail()` after `ms`. */
async function until<T>(
  what: string,
  ms: number,
  check: () => T | undefined,
  detail: () => string,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what} within ${ms / 1000} s\n${detail()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The `nsenter` arguments that run `argv` with only `env` in the node namespaces of `pid`. */
function nsenterArgs(pid: number, argv: string[], env: Record<string, string>): string[] {
  const assignments = Object.entries(env).map(([k, v]) => `${k}=${v}`);
  return ['-t', String(pid), '-m', '-n', '--', 'env', '-i', ...assignments, ...argv];
}

/** Runs a command in the node namespace (mount and network) of `pid`. */
function inNode(pid: number, argv: string[], env: Record<string, string> = {}) {
  return spawnSync('nsenter', nsenterArgs(pid, argv, env), {
    encoding: 'utf8',
    timeout: 600_000,
  });
}

/** Reads one line from a child's stdout. */
function firstLine(child: ChildProcess, what: string, ms: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(
      () => reject(new Error(`${what}: no answer within ${ms} ms: ${err}`)),
      ms,
    );
    child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl >= 0) {
        clearTimeout(timer);
        resolve(out.slice(0, nl));
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited (${code}): ${err}`));
    });
  });
}

interface BootResult {
  manifest: DependencyManifest;
  calls: string;
  instanceLog: string;
}

/**
 * Publishes the dependency set (with `agent` in place of the published agent when given),
 * boots a node from the rendered user-data and runs its agent as the unit says; asserts as
 * it goes and returns what the checks after it read.
 */
async function bootNode(
  emulator: AwsEmulator,
  agent: AgentArtifact | undefined,
  label: string,
  otelLogs = false,
): Promise<BootResult> {
  // The CLI loads these lazily (apps/cli's module boundaries); so does its test.
  const { CreateBucketCommand } = await import('@aws-sdk/client-s3');
  const { DependencyResolver, DownloadCache, syncDependencies } =
    await import('@podmin/cli-data-access-dependencies');
  const { createS3Client, S3ObjectStore } = await import('@podmin/data-access-object-store');
  const { createClusterCa, generateWorkloadCaSecretValue, serializeClusterCaSecret } =
    await import('@podmin/util-pki');
  const work = fs.mkdtempSync(path.join(os.tmpdir(), `podmin-boot-${label}-`));
  const root = path.join(work, 'root');
  fs.mkdirSync(path.join(work, 'ns'), { recursive: true });
  fs.mkdirSync(path.join(work, 'home'));
  fs.mkdirSync(root);
  const children: ChildProcess[] = [];
  const sandbox = makeSandbox({
    AWS_ENDPOINT_URL: emulator.endpoint,
    AWS_ACCESS_KEY_ID: emulator.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: emulator.credentials.secretAccessKey,
  });
  let upstream: FakeUpstream | undefined;
  let agentProcess: ChildProcess | undefined;
  let agentOutput = '';
  try {
    // The cluster as setup leaves it: a bucket, the create-only CAs in Parameter Store.
    const region = emulator.region;
    const bucket = uniqueBucketName(`podmin-boot-${label}`);
    const cluster = `boot${label.replace(/[^a-z]/g, '')}${Date.now().toString(36)}`.slice(0, 40);
    const clients = { region, endpoint: emulator.endpoint, credentials: emulator.credentials };
    const s3 = createS3Client(clients);
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    const secrets = new ParameterStoreSecretStore(createSsmClient(clients));
    await secrets.create(
      `/${cluster}/_system/workload-ca-key`,
      Buffer.from(generateWorkloadCaSecretValue()),
    );
    await secrets.create(
      `/${cluster}/_system/cluster-ca`,
      Buffer.from(serializeClusterCaSecret(await createClusterCa(cluster, new Date()))),
    );
    // `podmin secret create otel-logs-headers --system`, read by the node before each start.
    if (otelLogs)
      await secrets.create(
        `/${cluster}/_system/otel-logs-headers`,
        Buffer.from('{"authorization":"Bearer boot-test"}'),
      );
    const store = new S3ObjectStore({ client: s3, bucket });

    // Publish the dependency set the way setup's sync does (libs/cli/providers/src/aws-infra-deps.ts).
    upstream = await upstreamWithStandIns(work);
    const reporter = { info: () => undefined, warn: () => undefined, progress: () => undefined };
    const synced = await syncDependencies(store, ['amd64'], {
      resolver: new DependencyResolver({
        cliVersion: VERSION,
        endpoints: upstream.endpoints,
        ...(agent === undefined ? {} : { agent }),
      }),
      cache: new DownloadCache({ dir: path.join(work, 'cache'), reporter }),
      images: pauseStandIn,
      reporter,
      ...(otelLogs ? { otelLogs: true } : {}),
    });
    const manifest = synced.manifest;
    const published = manifest.dependencies['podmin-agent']?.['amd64'];
    expect(published).toMatchObject(
      agent === undefined
        ? {
            version: VERSION,
            path: `dependencies/podmin-agent/podmin-agent-v${VERSION}-linux-amd64.tar.gz`,
          }
        : { version: agent.version, digest: agent.digest },
    );

    // The amd64 user-data, exactly as a launch template receives it (gzip), unpacked.
    const rendered = path.join(work, 'user-data.sh');
    fs.writeFileSync(
      rendered,
      gunzipSync(
        renderAwsUserDataGzip({
          arch: 'amd64',
          cluster,
          nodegroup: 'default',
          bucket,
          region,
          manifest,
          ...(otelLogs
            ? {
                otelLogs: {
                  endpoint: OTEL_ENDPOINT,
                  protocol: 'http' as const,
                  mtls: false,
                  headersProvider: 'aws-parameter-store' as const,
                },
              }
            : {}),
        }),
      ),
    );

    // The instance: its ENIs in IMDS (the secondary's ordinary address pre-seeded, so only the
    // prefix is assigned through EC2) and its role's credentials.
    const instanceConfig = path.join(work, 'instance.json');
    const instanceLog = path.join(work, 'instance.log');
    fs.writeFileSync(
      instanceConfig,
      JSON.stringify({
        port: 0,
        region,
        instanceId: 'i-0b007e570000b0075',
        role: 'podmin-node',
        credentials: emulator.credentials,
        interfaces: [
          {
            mac: PRIMARY_MAC,
            device: 0,
            eniId: 'eni-00000000000000001',
            ipv6s: [NODE_ADDRESS],
            prefixes: [],
          },
          {
            mac: SECONDARY_MAC,
            device: 1,
            eniId: 'eni-0123456789abcdef0',
            ipv6s: ['2600:1f14:aaaa:bb01::99'],
            prefixes: [],
          },
        ],
        assignPrefix: POD_PREFIX,
        assignAddress: '2600:1f14:aaaa:bb01::98',
        log: instanceLog,
      }),
    );
    const hostBridge = spawn(process.execPath, [
      path.join(BOOT, 'bridge.mjs'),
      `unix:${path.join(work, 's3.sock')}`,
      `tcp:${new URL(emulator.endpoint).hostname}:${new URL(emulator.endpoint).port}`,
    ]);
    children.push(hostBridge);
    await firstLine(hostBridge, 'the host bridge', 10_000);
    const holder = spawn(
      'unshare',
      [
        '-m',
        '-n',
        '--propagation',
        'private',
        'bash',
        path.join(BOOT, 'node-namespace.sh'),
        root,
        work,
        String(NODE_S3_PORT),
        instanceConfig,
      ],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    children.push(holder);
    const imdsPort = (await firstLine(holder, 'the node namespace', 30_000)).replace(/^ready /, '');
    const pid = holder.pid as number;
    const nodeS3 = `http://127.0.0.1:${NODE_S3_PORT}`;
    const imds = `http://127.0.0.1:${imdsPort}`;

    // Bootstrap: the rendered main, for real, VM-only steps recorded instead.
    const awsBin = execFileSync('bash', [path.join(BOOT, 'ensure-awscli.sh')], {
      encoding: 'utf8',
    }).trim();
    const calls = path.join(work, 'calls.log');
    const runUserData = () =>
      inNode(pid, ['bash', path.join(BOOT, 'run-userdata.sh'), rendered, calls], {
        PATH: `${path.dirname(awsBin)}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`,
        HOME: path.join(work, 'home'),
        PODMIN_TEST_ROOT: root,
        PODMIN_TEST_IMDS: imds,
        PODMIN_TEST_S3_ENDPOINT: nodeS3,
        PODMIN_TEST_EC2_ENDPOINT: imds,
        PODMIN_TEST_RETRY_DELAY: '1',
        // The AWS CLI takes the instance role's credentials from IMDS, as on a VM.
        AWS_EC2_METADATA_SERVICE_ENDPOINT: `${imds}/`,
      });
    const boot = runUserData();
    if (boot.status !== 0)
      throw new Error(`user-data failed (${boot.status}):\n${boot.stderr}\n${boot.stdout}`);
    expect(boot.stderr).toContain('bootstrap complete');

    // The installed node: every dependency where bootstrap puts it, the agent artifact whole.
    const agentDir = path.join(root, 'opt/podmin/agent');
    for (const file of [
      'podmin-agent.cjs',
      'agent-staticpod.cjs',
      'agent-registry.cjs',
      'agent-identity.cjs',
      'agent-coordinator.cjs',
      'agent-dns.cjs',
      'agent-dns-udp.cjs',
      'agent-dataplane.cjs',
      'bpf/service_lb.o',
      'koffi/linux_x64/koffi.node',
      'koffi/linux_arm64/koffi.node',
      'proto/health/v1/health.proto',
    ]) {
      expect({ file, present: fs.existsSync(path.join(agentDir, file)) }).toEqual({
        file,
        present: true,
      });
    }
    expect(fs.lstatSync(agentDir).isSymbolicLink()).toBe(true);
    for (const file of [
      'usr/local/bin/containerd',
      'usr/local/bin/runsc',
      'usr/local/bin/kubelet',
      'usr/local/bin/crictl',
      'usr/local/bin/coredns',
      'opt/cni/bin/ptp',
      'opt/podmin/node/bin/node',
    ]) {
      expect({ file, present: fs.existsSync(path.join(root, file)) }).toEqual({
        file,
        present: true,
      });
    }
    expect(fs.existsSync(path.join(root, 'usr/local/bin/containerd-shim-runc-v2'))).toBe(false);
    const nodeEnv = environmentFile(
      fs.readFileSync(path.join(root, 'etc/podmin/node.env'), 'utf8'),
    );
    expect(nodeEnv).toMatchObject({
      NODE_ADDRESS,
      POD_PREFIX,
      POD_INTERFACE: 'ens6',
      GATEWAY: 'fe80::1',
    });
    const instanceRequests = fs.readFileSync(instanceLog, 'utf8');
    // Exactly one prefix assigned, and only after the lookup that found none.
    expect(instanceRequests.match(/ec2 AssignIpv6Addresses .*Ipv6PrefixCount=1/g)).toHaveLength(1);
    expect(instanceRequests).not.toContain('(no token)');

    // Every rendered unit passes systemd-analyze verify against this root (systemd's own units
    // copied in; host tools the units call, ip and modprobe, as stand-ins: nothing else is
    // stood in, the dependencies' programs are the installed ones).
    const units = path.join(root, 'etc/systemd/system');
    const unitFiles = fs.readdirSync(units).filter((n) => /\.(service|mount)$/.test(n));
    expect(unitFiles.sort()).toEqual([
      'containerd.service',
      'coredns.service',
      ...(otelLogs ? ['fluent-bit.service'] : []),
      'kubelet.service',
      'podmin-agent.service',
      'podmin-pod-network.service',
      'run-podmin.mount',
    ]);
    if (otelLogs) checkOtelLogsInstall(root, fs.readFileSync(calls, 'utf8'));
    else expect(fs.existsSync(path.join(root, 'var/lib/dpkg'))).toBe(false);
    const systemUnits = ['/usr/lib/systemd/system', '/lib/systemd/system'].find((d) =>
      fs.existsSync(path.join(d, 'sysinit.target')),
    );
    if (
      systemUnits !== undefined &&
      spawnSync('sh', ['-c', 'command -v systemd-analyze']).status === 0
    ) {
      fs.mkdirSync(path.join(root, 'usr/lib/systemd'), { recursive: true });
      fs.cpSync(systemUnits, path.join(root, 'usr/lib/systemd/system'), {
        recursive: true,
        verbatimSymlinks: true,
      });
      for (const tool of ['/usr/sbin/ip', '/sbin/modprobe']) {
        fs.mkdirSync(path.dirname(path.join(root, tool)), { recursive: true });
        fs.writeFileSync(path.join(root, tool), program(tool), { mode: 0o755 });
      }
      const verify = spawnSync(
        'systemd-analyze',
        ['verify', `--root=${root}`, ...unitFiles.map((u) => path.join(units, u))],
        { encoding: 'utf8' },
      );
      expect({ status: verify.status, output: verify.stdout + verify.stderr }).toEqual({
        status: 0,
        output: '',
      });
    } else {
      process.stdout.write(
        'SKIPPED boot: systemd-analyze verify (systemd-analyze or systemd units absent)\n',
      );
    }

    // /run/podmin as run-podmin.mount mounts it.
    const mountUnit = fs.readFileSync(path.join(units, 'run-podmin.mount'), 'utf8');
    const mounted = inNode(pid, [
      '/usr/bin/mount',
      '-t',
      unitValue(mountUnit, 'Type'),
      '-o',
      unitValue(mountUnit, 'Options'),
      unitValue(mountUnit, 'What'),
      unitValue(mountUnit, 'Where'),
    ]);
    expect({ status: mounted.status, stderr: mounted.stderr }).toEqual({ status: 0, stderr: '' });

    // The agent, exactly as podmin-agent.service runs it: its ExecStart with ${VAR}s from its
    // EnvironmentFile. Only the emulator endpoint (real nodes use AWS's) and IMDS's address for
    // the SDK's credentials are added, which the unit cannot say.
    const agentUnit = fs.readFileSync(path.join(units, 'podmin-agent.service'), 'utf8');
    const envFile = unitValue(agentUnit, 'EnvironmentFile');
    const unitEnv = environmentFile(fs.readFileSync(path.join(root, envFile), 'utf8'));
    const argv = unitValue(agentUnit, 'ExecStart')
      .split(/\s+/)
      .map((word) =>
        word.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, k: string) => unitEnv[k] ?? ''),
      );
    expect(argv.slice(0, 2)).toEqual([
      '/opt/podmin/node/bin/node',
      '/opt/podmin/agent/podmin-agent.cjs',
    ]);
    agentProcess = spawn(
      'nsenter',
      nsenterArgs(pid, argv, {
        ...unitEnv,
        PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
        AWS_ENDPOINT_URL: nodeS3,
        AWS_EC2_METADATA_SERVICE_ENDPOINT: `${imds}/`,
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      }),
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    agentProcess.stdout?.on('data', (d: Buffer) => (agentOutput += d.toString()));
    agentProcess.stderr?.on('data', (d: Buffer) => (agentOutput += d.toString()));
    const exited = new Promise<number>((resolve) =>
      agentProcess?.on('close', (code) => resolve(code ?? -1)),
    );
    const tail = () => agentOutput.split('\n').slice(-30).join('\n');
    const curl = (url: string) =>
      inNode(pid, [
        '/usr/bin/curl',
        '-sS',
        '-o',
        '/dev/null',
        '-w',
        '%{http_code}',
        '--max-time',
        '5',
        url,
      ]).stdout;

    await until(
      'the agent healthy',
      90_000,
      () => (curl('http://127.0.0.1:9440/healthz') === '200' ? true : undefined),
      tail,
    );
    // The registry on the address containerd's hosts.toml names (and the agent's default).
    const hosts = fs.readFileSync(
      path.join(root, 'etc/containerd/certs.d/registry.podmin.internal/hosts.toml'),
      'utf8',
    );
    const registry = /^server = '(.+)'$/m.exec(hosts)?.[1];
    expect(registry).toBe('http://127.0.0.1:5000');
    await until(
      'the registry answering /v2/',
      30_000,
      () => (curl(`${registry ?? ''}/v2/`) === '200' ? true : undefined),
      () => `${curl(`${registry ?? ''}/v2/`)}\n${tail()}`,
    );

    // A committed deployment becomes a static Pod in the root's /etc/podmin/manifests.
    const connected = await sandbox.run([
      'connect',
      cluster,
      '--provider',
      'aws',
      '--region',
      region,
      '--bucket',
      bucket,
    ]);
    expect(connected.code).toBe(0);
    fs.writeFileSync(
      path.join(sandbox.cwd, 'web.yaml'),
      daemonSetManifest({ namespace: 'default', image: 'registry.podmin.internal/apps/web:v1' }),
    );
    const deployed = await sandbox.run(deployArgs('web', 'default', '-f', 'web.yaml'));
    expect({ code: deployed.code, stderr: deployed.code === 0 ? '' : deployed.stderr }).toEqual({
      code: 0,
      stderr: '',
    });
    const staticPod = path.join(root, 'etc/podmin/manifests/web.yaml');
    const pod = await until(
      'no static Pod',
      60_000,
      () => (fs.existsSync(staticPod) ? fs.readFileSync(staticPod, 'utf8') : undefined),
      tail,
    );
    expect(pod).toContain('image: registry.podmin.internal/apps/web:v1');
    expect(pod).toContain(`- ${NODE_ADDRESS}`);

    if (otelLogs) {
      // fluent-bit.service's ExecStartPre, as the unit runs it (with the unit's Environment=),
      // on the booted node: the headers come from the emulator's Parameter Store now. Only the
      // emulator endpoint, IMDS's address and the output file's place (the unit's private
      // runtime directory, here under the root) are what the unit cannot say.
      const fluentUnit = fs.readFileSync(path.join(units, 'fluent-bit.service'), 'utf8');
      const out = path.join(root, 'run/fluent-bit/podmin.yaml');
      const pre = unitValue(fluentUnit, 'ExecStartPre')
        .split(/\s+/)
        .map((word) => word.replace(/%%/g, '%'))
        .map((word) => (word === '/run/fluent-bit/podmin.yaml' ? out : word));
      expect(pre.slice(0, 3)).toEqual([
        '/opt/podmin/node/bin/node',
        '/opt/podmin/agent/podmin-agent.cjs',
        'otel-logs-config',
      ]);
      const [envKey, envValue] = unitValue(fluentUnit, 'Environment').split('=') as [
        string,
        string,
      ];
      const generated = inNode(pid, pre, {
        [envKey]: envValue,
        PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
        AWS_ENDPOINT_URL: nodeS3,
        AWS_EC2_METADATA_SERVICE_ENDPOINT: `${imds}/`,
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      });
      expect({
        status: generated.status,
        stderr: generated.status === 0 ? '' : generated.stderr,
      }).toEqual({
        status: 0,
        stderr: '',
      });
      expect(fs.statSync(out).mode & 0o777).toBe(0o600);
      const config = fs.readFileSync(out, 'utf8');
      expect(config).toContain('- authorization Bearer boot-test\n');
      expect(config).toContain('logs_uri: /v1/logs\n');
      expect(config).toContain(`value: ${cluster}\n`);
      expect(config).not.toContain('tls.crt_file');

      // A package whose bytes differ from the manifest's digest stops bootstrap before dpkg
      // runs again: same size, other bytes, fetched anew.
      const fluentBit = manifest.dependencies['fluent-bit']?.['amd64'];
      if (fluentBit === undefined) throw new Error('no fluent-bit in the manifest');
      const downloaded = path.join(
        root,
        'opt/podmin/downloads',
        fluentBit.path.replace(/^dependencies\//, ''),
      );
      const tampered = fs.readFileSync(downloaded);
      expect(tampered.length).toBe(fluentBit.size);
      tampered.writeUInt8(tampered.readUInt8(tampered.length - 1) ^ 0xff, tampered.length - 1);
      await store.put(fluentBit.path, tampered);
      fs.rmSync(downloaded);
      const dpkgLog = fs.readFileSync(path.join(root, 'var/log/dpkg.log'), 'utf8');
      const dpkgCalls = (fs.readFileSync(calls, 'utf8').match(/^dpkg /gm) ?? []).length;
      const again = runUserData();
      expect(again.status).not.toBe(0);
      expect(again.stderr).toContain(`digest mismatch for ${fluentBit.path}; removing it`);
      expect(again.stderr).toContain('giving up after 5 attempts');
      expect(fs.readFileSync(path.join(root, 'var/log/dpkg.log'), 'utf8')).toBe(dpkgLog);
      expect((fs.readFileSync(calls, 'utf8').match(/^dpkg /gm) ?? []).length).toBe(dpkgCalls);
    }

    agentProcess.kill('SIGTERM');
    // SIGTERM, as systemd stops the unit: every service stopped in order, exit 0.
    const code = await exited;
    expect({ code, log: code === 0 ? '' : tail() }).toEqual({ code: 0, log: '' });
    agentProcess = undefined;
    return { manifest, calls: fs.readFileSync(calls, 'utf8'), instanceLog: instanceRequests };
  } catch (err) {
    if (agentOutput !== '')
      process.stderr.write(
        `agent output (${label}):\n${agentOutput.split('\n').slice(-60).join('\n')}\n`,
      );
    throw err;
  } finally {
    agentProcess?.kill('SIGKILL');
    for (const child of children.reverse()) {
      child.stdin?.end();
      child.kill('SIGTERM');
    }
    await new Promise((r) => setTimeout(r, 300));
    await upstream?.stop();
    sandbox.cleanup();
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/**
 * What user-data's dpkg did with the stand-in packages: libpq5 installed and configured before
 * Fluent Bit (dpkg's own log and the postinst scripts' record), Fluent Bit's files in the root,
 * and its unit enabled and queued, never waited for.
 */
function checkOtelLogsInstall(root: string, calls: string): void {
  const dpkgLog = fs.readFileSync(path.join(root, 'var/log/dpkg.log'), 'utf8');
  const events = dpkgLog
    .split('\n')
    .map((l) => / (install|status installed) (libpq5|fluent-bit):amd64 /.exec(l))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => `${m[1] as string} ${m[2] as string}`);
  expect(events).toEqual([
    'install libpq5',
    'status installed libpq5',
    'install fluent-bit',
    'status installed fluent-bit',
  ]);
  expect(fs.readFileSync(path.join(root, POSTINST_LOG), 'utf8')).toBe('libpq5\nfluent-bit\n');
  expect(fs.existsSync(path.join(root, 'opt/fluent-bit/bin/fluent-bit'))).toBe(true);
  const dpkgCalls = calls.split('\n').filter((l) => l.startsWith('dpkg '));
  expect(dpkgCalls).toEqual([
    expect.stringMatching(/^dpkg -i .*\/libpq5-v17\.6-0\+deb13u2-linux-amd64\.deb$/),
    expect.stringMatching(/^dpkg -i .*\/fluent-bit-v5\.0\.11-linux-amd64\.deb$/),
  ]);
  expect(calls).toContain('skipped systemctl enable fluent-bit.service');
  expect(calls).toContain('skipped systemctl start --no-block fluent-bit.service');
  expect(calls).not.toContain('enable --now fluent-bit');
}

// Jest's own skip, with the `SKIPPED boot: <reason>` line, where this machine cannot run it.
describeUnless(unusable(), 'boot')('boot', () => {
  describe('a node boots from the dependency set published in the emulator (real user-data, AWS CLI, agent)', () => {
    let emulator: AwsEmulator;
    beforeAll(async () => {
      emulator = await getAwsEmulator();
    });

    it('installs and runs the published agent artifact matching the CLI version, with --otel-logs', async () => {
      expect(fs.existsSync(ARTIFACT)).toBe(true);
      const { calls } = await bootNode(emulator, undefined, 'published', true);
      // What only a VM can do was called, not run.
      expect(calls).toContain('skipped install_ssm_agent');
      expect(calls).toContain(
        'skipped systemctl enable --now podmin-agent.service coredns.service',
      );
      expect(calls).toContain('skipped sysctl --system');
    }, 900_000);

    it('installs and runs an agent artifact built from this checkout (setup --agent-source)', async () => {
      const { buildAgentFromSource } = await import('@podmin/cli-data-access-dependencies');
      const agent = await buildAgentFromSource(REPO, VERSION);
      expect(agent.version).toMatch(
        new RegExp(`^${VERSION.replace(/\./g, '\\.')}-source\\.[0-9a-f]{12}$`),
      );
      const { manifest } = await bootNode(emulator, agent, 'source');
      expect(manifest.dependencies['podmin-agent']?.['amd64']?.path).toBe(
        `dependencies/podmin-agent/podmin-agent-v${agent.version}-linux-amd64.tar.gz`,
      );
    }, 900_000);
  });
});
