import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
// The CLI loads these lazily (module boundaries forbid static imports), so the test does too.
import type { ObjectStore } from '@podmin/data-access-object-store';
import {
  LocalSecretStore,
  ParameterStoreSecretStore,
  createSsmClient,
} from '@podmin/data-access-secrets';
import {
  awsAgentArgs,
  type BuiltAgent,
  emulatorAgentEnv,
  emulatorBucket,
  freeAgentPorts,
  localAgentArgs,
  seedClusterSecrets,
  spawnBuiltAgent,
  waitFor,
} from '@podmin/testing';
import { INDEX_KEY, parseIndex } from '@podmin/util-desired-state';
import { parseReceipt, podRevision, receiptKey } from '@podmin/util-receipts';
import { awsConnectArgs, deployWebArgs, makeSandbox, type CliSandbox } from './cli-harness';

/**
 * Starts the built podmin-agent with `args` as node `nodeId`, on loopback ports of its own and a
 * temporary node root (removed once it exits), without a node stack.
 */
async function startAgent(
  args: string[],
  nodeId: string,
  env: Record<string, string>,
): Promise<BuiltAgent> {
  const nodeRoot = fs.mkdtempSync(path.join(os.tmpdir(), `podmin-receipts-${nodeId}-`));
  const agent = spawnBuiltAgent({
    args,
    nodeId,
    nodeRoot,
    ports: await freeAgentPorts(),
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...env },
  });
  agent.exited
    .finally(() => fs.rmSync(nodeRoot, { recursive: true, force: true }))
    .catch(() => undefined);
  return agent;
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
  const deploy = await sandbox.run(deployWebArgs('hello:v1', '--wait', '--timeout', '90s'));
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
  // Real agents start and apply a revision: past Jest's 60 s default on a loaded machine.
  jest.setTimeout(150_000);
  it('two agents on the local provider and a local bucket', async () => {
    const sandbox = makeSandbox();
    const agents: BuiltAgent[] = [];
    try {
      expect((await sandbox.run(['connect', 'demo', '--provider', 'local'])).code).toBe(0);
      const bucket = path.join(sandbox.dataHome, 'podmin', 'buckets', 'demo');
      const secretsFile = path.join(sandbox.home, 'node-secrets.json');
      await seedClusterSecrets(
        new LocalSecretStore({ file: secretsFile, provider: 'aws-parameter-store' }),
        'demo',
      );
      for (const node of ['node-1', 'node-2'])
        agents.push(
          await startAgent(localAgentArgs(bucket), node, {
            PODMIN_LOCAL_SECRETS_FILE: secretsFile,
          }),
        );
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
      await Promise.all(agents.map((a) => a.stop()));
      sandbox.cleanup();
    }
  });

  it('an agent on the aws provider and a bucket on the S3 emulator', async () => {
    const { S3ObjectStore, createS3Client } = await import('@podmin/data-access-object-store');
    const { emulator, client, bucket } = await emulatorBucket('podmin-receipts', createS3Client);
    const cluster = `r${Date.now().toString(36)}`;
    await seedClusterSecrets(new ParameterStoreSecretStore(createSsmClient(emulator)), cluster);
    const awsEnv = emulatorAgentEnv(emulator);
    const sandbox = makeSandbox(awsEnv);
    const agents: BuiltAgent[] = [];
    try {
      expect((await sandbox.run(awsConnectArgs(cluster, emulator.region, bucket))).code).toBe(0);
      agents.push(
        await startAgent(
          awsAgentArgs(bucket, emulator.region, cluster),
          'i-0123456789abcdef0',
          awsEnv,
        ),
      );
      const store = new S3ObjectStore({ client, bucket });
      await waitFor(
        async () => ((await store.list('status/default/')).objects.length === 1 ? true : undefined),
        `the receipt (agent said: ${agents[0]?.output().slice(-500) ?? ''})`,
        45_000,
      );
      await receiptsWithoutNodeStack(sandbox, store, ['i-0123456789abcdef0']);
    } finally {
      await Promise.all(agents.map((a) => a.stop()));
      sandbox.cleanup();
    }
  });
});
