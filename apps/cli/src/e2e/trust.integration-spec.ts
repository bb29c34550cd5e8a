import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { CreateKeyCommand, KMSClient, type CreateKeyCommandInput } from '@aws-sdk/client-kms';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { getAwsEmulator, uniqueBucketName } from '@podmin/testing';
import { parseSignedIndex, serializeIndex, SIGNATURE_MEMBER } from '@podmin/util-desired-state';
import { parseDeployers, verifyIndexSignature } from '@podmin/util-trust';
import {
  awsConnectArgs,
  deployArgs,
  expectExit,
  makeSandbox,
  type CliRun,
  type CliSandbox,
} from './cli-harness';

// The whole trusted-deployer flow through the built CLI against the emulator's S3, SSM and KMS:
// keys, the trust list in Parameter Store, signed deploys (local and KMS keys), refusals that
// write nothing, and concurrent signed deploys.
describe('podmin trust and signed deploys (S3, SSM and KMS on the emulator)', () => {
  const cluster = `trust${randomBytes(3).toString('hex')}`;
  const bucket = uniqueBucketName('podmin-trust');
  const listName = `/${cluster}/_system/deployers`;
  let sandbox: CliSandbox;
  let s3: S3Client;
  let ssm: SSMClient;
  let kms: KMSClient;
  let keyDir: string;

  const podmin = (...args: string[]): Promise<CliRun> => sandbox.run(args);

  /** The index bytes in the bucket. */
  const indexText = async (): Promise<string> => {
    const out = await s3.send(
      new GetObjectCommand({ Bucket: bucket, Key: 'deployments/index.json' }),
    );
    return Buffer.from(await out.Body!.transformToByteArray()).toString('utf8');
  };

  /** The trust list in Parameter Store, or undefined when the parameter does not exist. */
  const trustList = async (): Promise<string | undefined> => {
    try {
      const out = await ssm.send(new GetParameterCommand({ Name: listName, WithDecryption: true }));
      return out.Parameter?.Value;
    } catch (err) {
      if ((err as Error).name === 'ParameterNotFound') return undefined;
      throw err;
    }
  };

  /** What a node concludes about the index in the bucket against the stored trust list. */
  const verdict = async () => {
    const { index, signature } = parseSignedIndex(await indexText());
    const list = await trustList();
    if (list === undefined) throw new Error('no trust list');
    return {
      index,
      verdict: verifyIndexSignature({
        cluster,
        entriesText: serializeIndex(index),
        signature,
        deployers: parseDeployers(list, listName),
      }),
    };
  };

  const createKmsKey = async (input: CreateKeyCommandInput) =>
    (await kms.send(new CreateKeyCommand(input))).KeyMetadata!.Arn!;

  beforeAll(async () => {
    const emulator = await getAwsEmulator();
    const config = {
      endpoint: emulator.endpoint,
      region: emulator.region,
      credentials: emulator.credentials,
    };
    s3 = new S3Client({ ...config, forcePathStyle: true });
    ssm = new SSMClient(config);
    kms = new KMSClient(config);
    sandbox = makeSandbox({
      AWS_ENDPOINT_URL: emulator.endpoint,
      AWS_ACCESS_KEY_ID: emulator.credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: emulator.credentials.secretAccessKey,
    });
    keyDir = path.join(sandbox.configHome, 'podmin', 'trust', cluster);
    await expectExit(sandbox, awsConnectArgs(cluster, emulator.region, bucket), 0);
  }, 180_000);
  afterAll(() => {
    s3?.destroy();
    ssm?.destroy();
    kms?.destroy();
    sandbox?.cleanup();
  });

  it('writes an unsigned index while there is no key and no trusted deployer', async () => {
    await expectExit(sandbox, deployArgs('web', 'default', '--image', 'hello:v1'), 0);
    expect(await indexText()).not.toContain(SIGNATURE_MEMBER);
    expect(await trustList()).toBeUndefined();
  });

  it('keygen writes a 0600 Ed25519 key under the config directory and refuses to overwrite it', async () => {
    const made = await expectExit(sandbox, ['trust', 'keygen', '--name', 'alice'], 0);
    const pub = path.join(keyDir, 'alice.pub');
    expect(made.stdout.trim()).toBe(pub);
    expect(made.stderr).toContain(`podmin trust add alice --public-key ${pub}`);
    const key = path.join(keyDir, 'alice.key');
    expect(fs.statSync(key).mode & 0o777).toBe(0o600);
    expect(fs.statSync(keyDir).mode & 0o777).toBe(0o700);
    const before = fs.readFileSync(key);
    await expectExit(
      sandbox,
      ['trust', 'keygen', '--name', 'alice'],
      1,
      'alice.key already exists',
      '--force',
    );
    expect(fs.readFileSync(key)).toEqual(before);
  });

  it('refuses a malformed public key and a KMS key of the wrong type, writing nothing', async () => {
    const bad = path.join(sandbox.cwd, 'bad.pub');
    fs.writeFileSync(bad, 'this is not a key\n');
    await expectExit(
      sandbox,
      ['trust', 'add', 'bob', '--public-key', bad],
      1,
      `--public-key ${bad}: is not a public key`,
    );
    const symmetric = await createKmsKey({});
    await expectExit(
      sandbox,
      ['trust', 'add', 'bob', '--kms-key', symmetric],
      2,
      'SYMMETRIC_DEFAULT',
      'ECC_NIST_P256, usage SIGN_VERIFY, algorithm ECDSA_SHA_256',
    );
    const encrypting = await createKmsKey({ KeySpec: 'RSA_2048', KeyUsage: 'ENCRYPT_DECRYPT' });
    await expectExit(
      sandbox,
      ['trust', 'add', 'bob', '--kms-key', encrypting],
      2,
      'RSA_2048 key for ENCRYPT_DECRYPT',
    );
    expect(await trustList()).toBeUndefined();
    expect((await podmin('trust', 'list')).stdout).toBe(
      'enforcement: off (no trusted deployers)\n',
    );
  });

  it('add turns enforcement on and an unsigned deploy is then refused with the index byte-identical', async () => {
    const added = await expectExit(
      sandbox,
      ['trust', 'add', 'alice', '--public-key', path.join(keyDir, 'alice.pub')],
      0,
      'Enforcement is now on',
      'podmin trust sign',
    );
    expect(added.stdout.trim()).toBe('alice');
    expect(parseDeployers((await trustList())!, listName).deployers.map((d) => d.name)).toEqual([
      'alice',
    ]);
    const before = await indexText();
    // Without the default key this machine has no signer: the deploy must stop before writing.
    fs.renameSync(path.join(keyDir, 'alice.key'), path.join(sandbox.home, 'alice.key.aside'));
    try {
      await expectExit(
        sandbox,
        deployArgs('api', 'default', '--image', 'hello:v1'),
        1,
        `cluster ${cluster} runs only desired state signed by a trusted deployer (alice)`,
        'nothing was written',
        '--signing-key',
        'podmin trust keygen',
      );
      await expectExit(sandbox, ['delete', 'web', '-g', 'default'], 1, 'trusted deployer (alice)');
    } finally {
      fs.renameSync(path.join(sandbox.home, 'alice.key.aside'), path.join(keyDir, 'alice.key'));
    }
    expect(await indexText()).toBe(before);
    expect((await verdict()).verdict).toMatchObject({ trusted: false });
  });

  it("trust sign names an unsigned index's entries, needs --yes without a terminal, then re-signs it unchanged so that it verifies", async () => {
    const text = await indexText();
    const before = parseSignedIndex(text).index;
    await expectExit(
      sandbox,
      ['trust', 'sign'],
      1,
      'is not trusted now (the index is unsigned',
      'default/web  revision ',
      'confirmation required, nothing was written',
      '--yes',
    );
    expect(await indexText()).toBe(text);
    await expectExit(sandbox, ['trust', 'sign', '--yes'], 0, 'as alice');
    const after = await verdict();
    expect(after.index).toEqual(before);
    expect(after.verdict).toMatchObject({ trusted: true, signer: 'alice' });
  });

  it('trusts a KMS key, and deploys signed by it and by the local key both verify', async () => {
    const arn = await createKmsKey({ KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY' });
    await expectExit(sandbox, ['trust', 'add', 'ci', '--kms-key', arn], 0, 'Trusted deployer ci');
    const listed = JSON.parse(
      (await expectExit(sandbox, ['trust', 'list', '-o', 'json'], 0)).stdout,
    ) as Array<Record<string, unknown>>;
    expect(listed).toEqual([
      expect.objectContaining({ name: 'alice', algorithm: 'ed25519', kmsKeyArn: null }),
      expect.objectContaining({ name: 'ci', algorithm: 'ecdsa-p256-sha256', kmsKeyArn: arn }),
    ]);
    const table = (await podmin('trust', 'list')).stdout;
    expect(table).toContain('enforcement: on (2 trusted deployers)');
    expect(table).toContain(arn);

    await expectExit(
      sandbox,
      [...deployArgs('api', 'default', '--image', 'hello:v2'), '--kms-key', arn, '--signer', 'ci'],
      0,
    );
    const byKms = await verdict();
    expect(byKms.verdict).toMatchObject({ trusted: true, signer: 'ci' });
    expect(Object.keys(byKms.index).sort()).toEqual(['default/api', 'default/web']);

    // The same through the environment, as CI would set it.
    const viaEnv = await sandbox.run(deployArgs('api', 'default', '--image', 'hello:v3'), {
      PODMIN_KMS_KEY: arn,
      PODMIN_SIGNER: 'ci',
    });
    expect(viaEnv.code).toBe(0);
    expect((await verdict()).verdict).toMatchObject({ trusted: true, signer: 'ci' });

    await expectExit(sandbox, ['delete', 'api', '-g', 'default'], 0);
    const byLocal = await verdict();
    expect(byLocal.verdict).toMatchObject({ trusted: true, signer: 'alice' });
    expect(Object.keys(byLocal.index)).toEqual(['default/web']);
    expect((byLocal.verdict as { generation: number }).generation).toBeGreaterThan(
      (byKms.verdict as { generation: number }).generation,
    );
  });

  it('rollback and rollout restart sign their index writes too', async () => {
    await expectExit(sandbox, ['rollback', 'api', '-g', 'default', '--no-pin'], 0);
    const rolledBack = await verdict();
    expect(rolledBack.verdict).toMatchObject({ trusted: true, signer: 'alice' });
    expect(Object.keys(rolledBack.index).sort()).toEqual(['default/api', 'default/web']);
    const pod = rolledBack.index['default/web']?.pod;
    await expectExit(sandbox, ['rollout', 'restart', 'web', '-g', 'default'], 0);
    const restarted = await verdict();
    expect(restarted.verdict).toMatchObject({ trusted: true, signer: 'alice' });
    expect(restarted.index['default/web']?.pod).not.toBe(pod);
  });

  it('20 concurrent signed deploys (local and KMS keys) lose nothing and the final index verifies', async () => {
    const arn = parseDeployers((await trustList())!, listName).deployers.find(
      (d) => d.name === 'ci',
    )?.kmsKeyArn;
    expect(arn).toBeDefined();
    const names = Array.from({ length: 20 }, (_, i) => `svc${i}`);
    const started = Date.now();
    const runs = await Promise.all(
      names.map((name, i) =>
        sandbox.run(
          deployArgs(name, 'default', '--image', 'hello:v1'),
          // Every other one signs with the KMS key: a lost race re-signs with one more Sign call.
          i % 2 === 0 ? {} : { PODMIN_KMS_KEY: arn!, PODMIN_SIGNER: 'ci' },
        ),
      ),
    );
    const elapsed = Date.now() - started;
    process.stdout.write(`20 concurrent signed podmin deploy processes: ${elapsed} ms\n`);
    for (const [i, run] of runs.entries())
      expect({ name: names[i], code: run.code, stderr: run.stderr }).toMatchObject({ code: 0 });
    const { index, verdict: result } = await verdict();
    expect(result).toMatchObject({ trusted: true });
    expect(Object.keys(index).sort()).toEqual(
      ['default/api', 'default/web', ...names.map((n) => `default/${n}`)].sort(),
    );
  }, 180_000);

  it('remove: an unknown name and the last deployer without --yes change nothing; --yes turns enforcement off', async () => {
    const list = await trustList();
    await expectExit(
      sandbox,
      ['trust', 'remove', 'bob'],
      1,
      'no such trusted deployer (trusted: alice, ci)',
      'nothing was written',
    );
    expect(await trustList()).toBe(list);
    await expectExit(sandbox, ['trust', 'remove', 'ci'], 0, 'Removed deployer ci');
    const one = await trustList();
    expect(parseDeployers(one!, listName).deployers.map((d) => d.name)).toEqual(['alice']);
    // stdin is not a terminal here: removing the last deployer needs --yes.
    await expectExit(sandbox, ['trust', 'remove', 'alice'], 1, 'last trusted deployer', '--yes');
    expect(await trustList()).toBe(one);
    await expectExit(sandbox, ['trust', 'remove', 'alice', '--yes'], 0, 'enforcement is off');
    expect(await trustList()).toBeUndefined();
    expect((await podmin('trust', 'list')).stdout).toBe(
      'enforcement: off (no trusted deployers)\n',
    );
  });
});
