import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
// The CLI loads these lazily (module boundaries forbid static imports), so the test does too.
import type { ObjectStore } from '@podmin/data-access-object-store';
import {
  LocalSecretStore,
  ParameterStoreSecretStore,
  createSsmClient,
  type SecretStore,
} from '@podmin/data-access-secrets';
import { freeLoopbackPort, getAwsEmulator, uniqueBucketName, waitFor } from '@podmin/testing';
import { INDEX_KEY, parseIndex } from '@podmin/util-desired-state';
import { parseReceipt, podRevision, receiptKey } from '@podmin/util-receipts';
import { makeSandbox, type CliSandbox } from './cli-harness';

const AGENT_BIN = path.resolve(__dirname, '../../../../dist/bin/podmin-agent.cjs');

/** One running podmin-agent and its output. */
interface Agent {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number>;
}

/** Stores the CA secrets `podmin setup` would, so an agent can start. */
async function seedCas(secrets: Pick<SecretStore, 'create'>, cluster: string): Promise<void> {
  const { createClusterCa, generateWorkloadCaSecretValue, serializeClusterCaSecret } =
    await import('@podmin/util-pki');
  await secrets.create(
    `/${cluster}/_system/workload-ca-key`,
    Buffer.from(generateWorkloadCaSecretValue()),
  );
  await secrets.create(
    `/${cluster}/_system/cluster-ca`,
    Buffer.from(serializeClusterCaSecret(await createClusterCa(cluster, new Date()))),
  );
}

/** Starts a built podmin-agent with `flags` as node `nodeId`, on ports of its own, without a node stack. */
async function startAgent(
  flags: string[],
  nodeId: string,
  env: Record<string, string>,
): Promise<Agent> {
  const [health, registry, dns, coordination] = await Promise.all([
    freeLoopbackPort(),
    freeLoopbackPort(),
    freeLoopbackPort(),
    freeLoopbackPort(),
  ]);
  const nodeRoot = fs.mkdtempSync(path.join(os.tmpdir(), `podmin-receipts-${nodeId}-`));
  const child = spawn(process.execPath, [AGENT_BIN, ...flags], {
    env: {
      PATH: process.env['PATH'] ?? '',
      PODMIN_NODE_ROOT: nodeRoot,
      PODMIN_NODE_ADDRESS: '::1',
      PODMIN_NODE_ID: nodeId,
      PODMIN_AGENT_HEALTH_ADDRESS: `127.0.0.1:${health}`,
      PODMIN_AGENT_REGISTRY_LISTEN: `127.0.0.1:${registry}`,
      PODMIN_AGENT_DNS_LISTEN: `127.0.0.1:${dns}`,
      PODMIN_AGENT_COORDINATION_PORT: String(coordination),
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? -1)));
  exited
    .finally(() => fs.rmSync(nodeRoot, { recursive: true, force: true }))
    .catch(() => undefined);
  return { child, output: () => output, exited };
}

async function stopAll(agents: Agent[]): Promise<void> {
  for (const a of agents) if (a.child.exitCode === null) a.child.kill('SIGTERM');
  await Promise.all(agents.map((a) => a.exited));
}

/** Every key and its ETag under the prefixes podmin writes, to show a command changed nothing. */
async function bucketState(store: ObjectStore): Promise<string[]> {
  const out: string[] = [];
  for (const prefix of ['deployments/', 'nodegroups/', 'status/']) {
    let token: string | undefined;
    do {
      const page = await store.list(prefix, token);
      out.push(...page.objects.map((o) => `${o.key} ${o.etag}`));
      token = page.nextToken;
    } while (token !== undefined);
  }
  return out;
}

/**
 * The flow both buckets run: `deploy --wait` against real agents without a node stack, which
 * apply the revision but cannot report Ready; `status` showing that; a malformed receipt shown
 * as one node's error without changing anything.
 */
async function receiptsWithoutNodeStack(
  sandbox: CliSandbox,
  store: ObjectStore,
  nodes: readonly string[],
): Promise<void> {
  const deploy = await sandbox.run([
    'deploy',
    '--no-preflight',
    'web',
    '-g',
    'default',
    '--image',
    'hello:v1',
    '--wait',
    '--timeout',
    '90s',
  ]);
  expect(deploy.stdout.trim()).toBe('default/web');
  expect(deploy.code).toBe(1);
  expect(deploy.stderr).toContain(
    `applied on ${nodes.join(', ')}, but Ready is unknown there (kubelet Pods API absent; no node stack?)`,
  );
  expect(deploy.stderr).toContain('Hint: run `podmin status web -g default`');

  const index = await store.get(INDEX_KEY);
  const desired = podRevision(parseIndex(index.body)['default/web']?.pod ?? '');
  for (const node of nodes) {
    const receipt = parseReceipt((await store.get(receiptKey('default', node))).body, {
      nodegroup: 'default',
      node,
    });
    expect(receipt).toMatchObject({
      kubelet: 'absent',
      indexEtag: index.etag,
      heartbeatSeconds: 300,
    });
    expect(receipt.pods).toEqual([
      {
        deployment: 'default/web',
        revision: desired,
        ready: null,
        restarts: null,
        reason: null,
        identityExpiry: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) as string,
      },
    ]);
  }

  const json = await sandbox.run(['status', '-o', 'json']);
  expect(json.code).toBe(0);
  const [web] = JSON.parse(json.stdout) as Array<{
    desired: string;
    live: number;
    ready: number;
    summary: string;
    nodes: Array<{ node: string; state: string; applied: string; ready: boolean | null }>;
  }>;
  expect(web).toMatchObject({ desired, live: nodes.length, ready: 0 });
  expect(web?.nodes).toEqual(
    nodes.map((node): unknown =>
      expect.objectContaining({ node, state: 'applied', applied: desired, ready: null }),
    ),
  );
  expect(web?.summary).toBe(
    `web: 0/${nodes.length} ready (${nodes.length} applied, Ready unknown)`,
  );

  await store.put(receiptKey('default', 'node-x'), '{"schema": 1} trailing');
  const before = await bucketState(store);
  const table = await sandbox.run(['status', 'web', '-g', 'default']);
  expect(table.code).toBe(0);
  expect(table.stdout).toMatch(
    /web\s+default\s+node-x\s+\S+\s+-\s+error\s+-\s+\S+\s+malformed receipt status\/default\/node-x\.json/,
  );
  for (const node of nodes)
    expect(table.stdout).toMatch(
      new RegExp(
        `${node}\\s+${desired}\\s+${desired}\\s+unknown\\s+-\\s+\\S+\\s+no kubelet Pods API`,
      ),
    );
  expect(table.stdout).toContain(
    `web: 0/${nodes.length} ready (${nodes.length} applied, Ready unknown, 1 unreadable)`,
  );
  expect(await bucketState(store)).toEqual(before);
}

describe('node receipts without a node stack: applied revisions, Ready unknown', () => {
  it('two agents on the local provider and a local bucket', async () => {
    const sandbox = makeSandbox();
    const agents: Agent[] = [];
    try {
      expect((await sandbox.run(['connect', 'demo', '--provider', 'local'])).code).toBe(0);
      const bucket = path.join(sandbox.home, 'xdg-data', 'podmin', 'buckets', 'demo');
      const secretsFile = path.join(sandbox.home, 'node-secrets.json');
      await seedCas(
        new LocalSecretStore({ file: secretsFile, provider: 'aws-parameter-store' }),
        'demo',
      );
      const flags = [
        '--provider',
        'local',
        '--bucket',
        bucket,
        '--region',
        'local',
        '--cluster',
        'demo',
        '--nodegroup',
        'default',
        '--ipv6-prefix',
        'fd00:1:2:3:4::/80',
      ];
      for (const node of ['node-1', 'node-2'])
        agents.push(await startAgent(flags, node, { PODMIN_LOCAL_SECRETS_FILE: secretsFile }));
      const { LocalDirectoryObjectStore } = await import('@podmin/data-access-object-store');
      const store = new LocalDirectoryObjectStore(bucket);
      // Each agent writes its first receipt after its first pass, before anything is deployed.
      await waitFor(
        async () => ((await store.list('status/default/')).objects.length === 2 ? true : undefined),
        `both receipts (agents said: ${agents.map((a) => a.output().slice(-500)).join(' | ')})`,
        45_000,
      );
      await receiptsWithoutNodeStack(sandbox, store, ['node-1', 'node-2']);
    } finally {
      await stopAll(agents);
      sandbox.cleanup();
    }
  });

  it('an agent on the aws provider and a bucket on the S3 emulator', async () => {
    const emulator = await getAwsEmulator();
    const { S3ObjectStore, createS3Client } = await import('@podmin/data-access-object-store');
    const creds = {
      region: emulator.region,
      endpoint: emulator.endpoint,
      credentials: emulator.credentials,
    };
    const s3 = createS3Client(creds);
    const bucket = uniqueBucketName('podmin-receipts');
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    const cluster = `r${Date.now().toString(36)}`;
    await seedCas(new ParameterStoreSecretStore(createSsmClient(creds)), cluster);
    const awsEnv = {
      AWS_ENDPOINT_URL: emulator.endpoint,
      AWS_ENDPOINT_URL_S3: emulator.endpoint,
      AWS_ACCESS_KEY_ID: emulator.credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: emulator.credentials.secretAccessKey,
    };
    const sandbox = makeSandbox(awsEnv);
    const agents: Agent[] = [];
    try {
      expect(
        (
          await sandbox.run([
            'connect',
            cluster,
            '--provider',
            'aws',
            '--region',
            emulator.region,
            '--bucket',
            bucket,
          ])
        ).code,
      ).toBe(0);
      const flags = [
        '--provider',
        'aws',
        '--bucket',
        bucket,
        '--region',
        emulator.region,
        '--cluster',
        cluster,
        '--nodegroup',
        'default',
        '--ipv6-prefix',
        '2600:1f14:abc:1200:1::/80',
      ];
      agents.push(await startAgent(flags, 'i-0123456789abcdef0', awsEnv));
      const store = new S3ObjectStore({ client: s3, bucket });
      await waitFor(
        async () => ((await store.list('status/default/')).objects.length === 1 ? true : undefined),
        `the receipt (agent said: ${agents[0]?.output().slice(-500) ?? ''})`,
        45_000,
      );
      await receiptsWithoutNodeStack(sandbox, store, ['i-0123456789abcdef0']);
    } finally {
      await stopAll(agents);
      sandbox.cleanup();
    }
  });
});
