import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  DescribeSecretCommand,
  GetSecretValueCommand,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import {
  LocalSecretStore,
  ParameterStoreSecretStore,
  type SecretStore,
} from '@podmin/data-access-secrets';
import { getAwsEmulator, uniqueBucketName } from '@podmin/testing';
import { makeSandbox, runCli, type CliRun, type CliSandbox } from './cli-harness';

const DB_URL = 'postgres://app:e2e-db-password@db.product.svc/app';
const TOKEN = 'e2e-oauth-token-value';

/** How the secrets flow reaches one provider setup. */
interface SecretsSetup {
  sandbox: CliSandbox;
  cluster: string;
  connectArgs: string[];
  /** Extra environment for every CLI run (the emulator endpoint and credentials). */
  env: Record<string, string>;
  /** Writes an internal system secret behind the CLI's back, as setup would. */
  plantInternalSecret(name: string): Promise<void>;
  /** Checks how the provider stored a value, beyond what the CLI shows. */
  inspect(name: string, provider: 'aws-parameter-store' | 'aws-secrets-manager'): Promise<string>;
  cleanup(): Promise<void>;
}

/** Runs the built CLI with `stdin` piped in (or closed at once when absent). */
function runWithStdin(
  setup: SecretsSetup,
  args: string[],
  stdin?: string | Buffer,
): Promise<CliRun> {
  return runCli(args, {
    cwd: setup.sandbox.cwd,
    env: { ...setup.sandbox.env, ...setup.env },
    ...(stdin === undefined ? {} : { stdin }),
  });
}

function describeSecretsFlows(label: string, makeSetup: () => Promise<SecretsSetup>): void {
  describe(`podmin secret against ${label}`, () => {
    let setup: SecretsSetup;
    const podmin = (args: string[], stdin?: string | Buffer) => runWithStdin(setup, args, stdin);
    const output = (run: CliRun) => run.stdout + run.stderr;

    beforeAll(async () => {
      setup = await makeSetup();
      const connected = await podmin(['connect', setup.cluster, ...setup.connectArgs]);
      expect(connected.stderr).toContain(`Connected to cluster ${setup.cluster}`);
      expect(connected.code).toBe(0);
    }, 180_000);
    afterAll(() => setup.cleanup());

    it('creates from stdin and from a file, and lists names without values', async () => {
      const fromStdin = await podmin(
        ['secret', 'create', 'database-url', '--for', 'web', '-n', 'product', '--from-stdin'],
        DB_URL,
      );
      expect(fromStdin.code).toBe(0);
      expect(fromStdin.stderr).toContain('Created database-url for pod web in namespace product');
      const file = path.join(setup.sandbox.cwd, 'token.txt');
      fs.writeFileSync(file, TOKEN);
      const fromFile = await podmin([
        'secret',
        'create',
        'oauth-token',
        '--for',
        'web',
        '-n',
        'product',
        '--provider',
        'aws-secrets-manager',
        '--from-file',
        file,
      ]);
      expect(fromFile.code).toBe(0);

      const list = await podmin(['secret', 'list', '-n', 'product']);
      expect(list.code).toBe(0);
      expect(list.stdout.split('\n').map((l) => l.split(/\s+/).filter(Boolean))).toEqual([
        ['NAMESPACE', 'POD', 'KEY', 'PROVIDER'],
        ['product', 'web', 'database-url', 'aws-parameter-store'],
        ['product', 'web', 'oauth-token', 'aws-secrets-manager'],
        [],
      ]);
      for (const run of [fromStdin, fromFile, list]) {
        expect(output(run)).not.toContain(DB_URL);
        expect(output(run)).not.toContain(TOKEN);
      }
      expect(
        await setup.inspect(`/${setup.cluster}/product/web/database-url`, 'aws-parameter-store'),
      ).toBe(DB_URL);
      expect(
        await setup.inspect(`/${setup.cluster}/product/web/oauth-token`, 'aws-secrets-manager'),
      ).toBe(TOKEN);
      const again = await podmin(
        ['secret', 'create', 'database-url', '--for', 'web', '-n', 'product', '--from-stdin'],
        'x',
      );
      expect(again.code).toBe(1);
      expect(again.stderr).toContain('already exists');
    });

    it('updates an existing secret and refuses to update a missing one', async () => {
      const updated = await podmin(
        ['secret', 'update', 'database-url', '--for', 'web', '-n', 'product', '--from-stdin'],
        `${DB_URL}?sslmode=require`,
      );
      expect(updated.code).toBe(0);
      expect(
        await setup.inspect(`/${setup.cluster}/product/web/database-url`, 'aws-parameter-store'),
      ).toBe(`${DB_URL}?sslmode=require`);
      const missing = await podmin(
        ['secret', 'update', 'nope', '--for', 'web', '--from-stdin'],
        'x',
      );
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/^Error: updating \/\S+\/default\/web\/nope/m);
    });

    it('fails clearly without a value source and without a terminal', async () => {
      const run = await podmin(['secret', 'create', 'log-level', '--for', 'web']);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('no value source and no terminal to prompt on');
      expect(run.stderr).toContain('--from-stdin');
    });

    it('enforces Parameter Store rules: 4 KiB of UTF-8, no delete or restore', async () => {
      const big = await podmin(
        ['secret', 'create', 'big', '--for', 'web', '--from-stdin'],
        'x'.repeat(4097),
      );
      expect(big.code).toBe(1);
      expect(big.stderr).toContain("over the provider's 4 KiB limit");
      const binary = await podmin(
        ['secret', 'create', 'bin', '--for', 'web', '--from-stdin'],
        Buffer.from([0xff, 0xfe]),
      );
      expect(binary.code).toBe(1);
      expect(binary.stderr).toContain('not valid UTF-8');
      for (const verb of ['delete', 'restore']) {
        const run = await podmin(['secret', verb, 'database-url', '--for', 'web', '-n', 'product']);
        expect(run.code).toBe(1);
        expect(run.stderr).toContain('aws-parameter-store has no recovery window');
      }
      const list = await podmin([
        'secret',
        'list',
        '-n',
        'product',
        '--provider',
        'aws-parameter-store',
      ]);
      expect(list.stdout).toContain('database-url');
    });

    it('deletes a Secrets Manager secret with a recovery window and restores it', async () => {
      const binary = randomBytes(100);
      const stored = await podmin(
        [
          'secret',
          'create',
          'tls-blob',
          '--for',
          'api',
          '--provider',
          'aws-secrets-manager',
          '--from-stdin',
        ],
        binary,
      );
      expect(stored.code).toBe(0);
      const args = ['--for', 'api', '--provider', 'aws-secrets-manager'];
      const deleted = await podmin(['secret', 'delete', 'tls-blob', ...args]);
      expect(deleted.code).toBe(0);
      expect(deleted.stderr).toContain('30 days');
      expect((await podmin(['secret', 'list'])).stdout).not.toContain('tls-blob');
      const update = await podmin(['secret', 'update', 'tls-blob', ...args, '--from-stdin'], 'x');
      expect(update.code).toBe(1);
      expect(update.stderr).toContain('scheduled for deletion');
      const restored = await podmin(['secret', 'restore', 'tls-blob', ...args]);
      expect(restored.code).toBe(0);
      expect((await podmin(['secret', 'list'])).stdout).toContain('tls-blob');
    });

    it('destroys only with -y when there is no terminal to confirm on', async () => {
      await podmin(['secret', 'create', 'log-level', '--for', 'web', '--from-stdin'], 'info');
      const refused = await podmin(['secret', 'destroy', 'log-level', '--for', 'web']);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('confirmation required');
      expect(refused.stderr).toContain('-y');
      expect((await podmin(['secret', 'list'])).stdout).toContain('log-level');
      const destroyed = await podmin(['secret', 'destroy', 'log-level', '--for', 'web', '-y']);
      expect(destroyed.code).toBe(0);
      expect((await podmin(['secret', 'list'])).stdout).not.toContain('log-level');
    });

    it('accepts only otel-logs-headers as a system key and hides internal ones', async () => {
      const headers = '{"authorization":"Bearer e2e-otel-secret"}';
      const created = await podmin(
        ['secret', 'create', 'otel-logs-headers', '--system', '--from-stdin'],
        headers,
      );
      expect(created.code).toBe(0);
      expect(output(created)).not.toContain('e2e-otel-secret');
      const notJson = await podmin(
        ['secret', 'update', 'otel-logs-headers', '--system', '--from-stdin'],
        'authorization: e2e-otel-secret',
      );
      expect(notJson.code).toBe(1);
      expect(notJson.stderr).toContain('not valid JSON');
      expect(notJson.stderr).not.toContain('e2e-otel-secret');
      for (const key of ['workload-ca-key', 'cluster-ca']) {
        const run = await podmin(['secret', 'create', key, '--system', '--from-stdin'], 'x');
        expect(run.code).toBe(1);
        expect(run.stderr).toContain('internal system secret');
        const destroy = await podmin(['secret', 'destroy', key, '--system', '-y']);
        expect(destroy.code).toBe(1);
      }
      await setup.plantInternalSecret(`/${setup.cluster}/_system/workload-ca-key`);
      const all = await podmin(['secret', 'list', '-A']);
      expect(all.code).toBe(0);
      expect(all.stdout).not.toContain('_system');
      expect(all.stdout).not.toContain('workload-ca-key');
      expect(all.stdout).not.toContain('otel-logs-headers');
      const system = await podmin(['secret', 'list', '--system', '-o', 'json']);
      expect(JSON.parse(system.stdout)).toEqual([
        {
          namespace: '-',
          pod: '-',
          key: 'otel-logs-headers',
          provider: 'aws-parameter-store',
        },
      ]);
    });
  });
}

describeSecretsFlows('a local cluster (file store)', async () => {
  const sandbox = makeSandbox();
  const file = path.join(sandbox.dataHome, 'podmin', 'secrets', 'demo.json');
  const store = (provider: 'aws-parameter-store' | 'aws-secrets-manager'): SecretStore =>
    new LocalSecretStore({ file, provider });
  return Promise.resolve({
    sandbox,
    cluster: 'demo',
    connectArgs: ['--provider', 'local'],
    env: {},
    plantInternalSecret: (name: string) =>
      store('aws-parameter-store').create(name, Buffer.from(randomBytes(32).toString('base64'))),
    inspect: async (name, provider) => {
      // One file for both providers, readable by its owner only.
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      return (await store(provider).get(name)).toString();
    },
    cleanup: () => Promise.resolve(sandbox.cleanup()),
  });
});

describeSecretsFlows('SSM and Secrets Manager on the emulator', async () => {
  const emulator = await getAwsEmulator();
  const sandbox = makeSandbox({
    AWS_ENDPOINT_URL: emulator.endpoint,
    AWS_ACCESS_KEY_ID: emulator.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: emulator.credentials.secretAccessKey,
  });
  const config = {
    endpoint: emulator.endpoint,
    region: emulator.region,
    credentials: emulator.credentials,
  };
  const ssm = new SSMClient(config);
  const sm = new SecretsManagerClient(config);
  return {
    sandbox,
    cluster: `e2e${randomBytes(4).toString('hex')}`,
    connectArgs: [
      '--provider',
      'aws',
      '--region',
      emulator.region,
      '--bucket',
      uniqueBucketName('podmin-secrets'),
    ],
    env: {},
    plantInternalSecret: async (name: string) => {
      await new ParameterStoreSecretStore(ssm).create(
        name,
        Buffer.from(randomBytes(32).toString('base64')),
      );
    },
    inspect: async (name, provider) => {
      if (provider === 'aws-parameter-store') {
        const out = await ssm.send(new GetParameterCommand({ Name: name, WithDecryption: true }));
        expect(out.Parameter?.Type).toBe('SecureString');
        return out.Parameter?.Value ?? '';
      }
      const described = await sm.send(new DescribeSecretCommand({ SecretId: name }));
      expect(described.DeletedDate).toBeUndefined();
      const out = await sm.send(new GetSecretValueCommand({ SecretId: name }));
      return out.SecretString ?? Buffer.from(out.SecretBinary ?? []).toString();
    },
    cleanup: () => {
      ssm.destroy();
      sm.destroy();
      sandbox.cleanup();
      return Promise.resolve();
    },
  };
});
