import fs from 'node:fs';
import path from 'node:path';
import { LocalSecretStore } from '@podmin/data-access-secrets';
import { useTempDir } from '@podmin/testing';
import { signedStatement } from '@podmin/util-trust';
import { createPublicKey, verify } from 'node:crypto';
import { FakeKmsKeys } from './__fakes__/fake-kms-keys';
import { generateKeyFiles, trustKeyDir } from './key-files';
import { resolveIndexSigning, resolveSigner, type SignerDeps } from './signer';
import { addDeployer } from './trust-commands';
import { RecordingReporter } from '@podmin/cli-util-io';
import type { SecretStore } from '@podmin/data-access-secrets';

const ARN = 'arn:aws:kms:us-east-1:123456789012:key/0f0f0f0f-1111-2222-3333-444444444444';

describe('signer resolution', () => {
  const tmp = useTempDir('podmin-signer');

  function setup() {
    const store = new LocalSecretStore({
      file: path.join(tmp(), 'secrets.json'),
      provider: 'aws-parameter-store',
    });
    const reads: string[] = [];
    const counted: SecretStore = Object.assign(Object.create(store) as SecretStore, {
      get: (name: string) => {
        reads.push(name);
        return store.get(name);
      },
    });
    const kms = new FakeKmsKeys();
    kms.addSigningKey(ARN);
    const deps: SignerDeps = {
      cluster: 'demo',
      configDir: path.join(tmp(), 'config'),
      openStore: () => Promise.resolve(counted),
      kms: () => Promise.resolve(kms),
    };
    return { deps, kms, reads, dir: trustKeyDir(deps.configDir, 'demo') };
  }

  const none = { flags: {}, env: {} };

  it('has no signer without flags, variables or a key, and then reads the trust list once', async () => {
    const { deps, reads } = setup();
    expect(await resolveSigner(none, deps)).toBeUndefined();
    expect(await resolveIndexSigning(none, deps, 'deploying default/web')).toBeUndefined();
    expect(reads).toEqual(['/demo/_system/deployers']);
  });

  it('uses the one key keygen wrote, named after its file, without reading the trust list', async () => {
    const { deps, dir, reads } = setup();
    await generateKeyFiles(dir, 'alice', false);
    const signing = await resolveIndexSigning(none, deps, 'deploying default/web');
    expect(signing).toMatchObject({
      cluster: 'demo',
      signer: { signer: 'alice', algorithm: 'ed25519' },
    });
    expect(reads).toEqual([]);
    await generateKeyFiles(dir, 'bob', false);
    await expect(resolveSigner(none, deps)).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining('2 keys (alice, bob)'),
      hint: expect.stringContaining('--signing-key'),
    });
    expect((await resolveSigner({ flags: { signer: 'bob' }, env: {} }, deps))?.signer).toBe('bob');
    await expect(
      resolveSigner({ flags: { signer: 'carol' }, env: {} }, deps),
    ).rejects.toMatchObject({
      code: 'NOT_FOUND',
      message: expect.stringContaining('carol.key'),
    });
  });

  it('takes --signing-key before PODMIN_SIGNING_KEY, and --signer to rename it', async () => {
    const { deps } = setup();
    const a = await generateKeyFiles(path.join(tmp(), 'a'), 'alice', false);
    const b = await generateKeyFiles(path.join(tmp(), 'b'), 'bob', false);
    const env = { signingKey: b.privateKeyFile };
    expect((await resolveSigner({ flags: {}, env }, deps))?.signer).toBe('bob');
    expect(
      (await resolveSigner({ flags: { signingKey: a.privateKeyFile }, env }, deps))?.signer,
    ).toBe('alice');
    const renamed = await resolveSigner(
      { flags: { signingKey: a.privateKeyFile }, env: { signer: 'ci' } },
      deps,
    );
    expect(renamed?.signer).toBe('ci');
    // The signer signs with the key in the file.
    const statement = signedStatement('demo', 1, '{}\n');
    const signature = await renamed!.sign(statement);
    expect(
      verify(null, statement, createPublicKey(fs.readFileSync(a.publicKeyFile)), signature),
    ).toBe(true);
    await expect(
      resolveSigner({ flags: { signingKey: path.join(tmp(), 'nope.key') }, env: {} }, deps),
    ).rejects.toMatchObject({
      code: 'NOT_FOUND',
      message: expect.stringContaining('--signing-key'),
    });
    const notKey = path.join(tmp(), 'notes.key');
    fs.writeFileSync(notKey, 'hello');
    await expect(
      resolveSigner({ flags: { signingKey: notKey }, env: {} }, deps),
    ).rejects.toMatchObject({ message: expect.stringContaining('--signing-key') });
  });

  it('signs with a KMS key by ARN and name, one Sign call per signature', async () => {
    const { deps, kms } = setup();
    await expect(resolveSigner({ flags: { kmsKey: ARN }, env: {} }, deps)).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining('--kms-key needs --signer'),
    });
    await expect(
      resolveSigner({ flags: { kmsKey: 'alias/ci', signer: 'ci' }, env: {} }, deps),
    ).rejects.toMatchObject({ message: expect.stringContaining('--kms-key') });
    await expect(
      resolveSigner({ flags: {}, env: { kmsKey: ARN, signingKey: '/x.key' } }, deps),
    ).rejects.toMatchObject({
      message: expect.stringContaining('PODMIN_SIGNING_KEY and PODMIN_KMS_KEY'),
    });
    await expect(
      resolveSigner({ flags: { signer: 'Not A Label' }, env: {} }, deps),
    ).rejects.toMatchObject({ message: expect.stringContaining('--signer') });
    const signer = await resolveSigner({ flags: {}, env: { kmsKey: ARN, signer: 'ci' } }, deps);
    expect(signer).toMatchObject({ signer: 'ci', algorithm: 'ecdsa-p256-sha256' });
    expect(kms.calls).toEqual([]);
    await signer!.sign(Buffer.from('statement'));
    expect(kms.calls).toEqual([`sign ${ARN}`]);
  });

  it('refuses an unsigned write while enforcement is on, naming the deployers and how to sign', async () => {
    const { deps, dir } = setup();
    const key = await generateKeyFiles(dir, 'alice', false);
    await addDeployer(
      { name: 'alice', publicKeyFile: key.publicKeyFile },
      {
        ...deps,
        reporter: new RecordingReporter(),
        interactive: false,
        openBucket: () => Promise.reject(new Error('not used')),
      },
    );
    fs.rmSync(key.privateKeyFile);
    const err = await resolveIndexSigning(none, deps, 'deploying default/web').catch(
      (e: unknown) => e,
    );
    expect(err).toMatchObject({
      code: 'PRECONDITION_FAILED',
      fault: 'user',
      message: expect.stringContaining(
        'deploying default/web: cluster demo runs only desired state signed by a trusted deployer (alice)',
      ),
      hint: expect.stringMatching(/--signing-key.*--kms-key.*podmin trust keygen/),
    });
  });

  it('refuses an unsigned write when the trust list cannot be read', async () => {
    const { deps } = setup();
    const broken: SignerDeps = {
      ...deps,
      openStore: () =>
        Promise.resolve({
          get: () => Promise.reject(Object.assign(new Error('denied'), { code: 'ACCESS_DENIED' })),
        } as unknown as SecretStore),
    };
    await expect(resolveIndexSigning(none, broken, 'deleting default/web')).rejects.toMatchObject({
      message: expect.stringContaining(
        'cannot tell whether cluster demo accepts unsigned desired state',
      ),
    });
  });
});
