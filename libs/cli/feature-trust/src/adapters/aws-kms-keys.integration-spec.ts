import { createPublicKey, verify } from 'node:crypto';
import { CreateKeyCommand, type KMSClient } from '@aws-sdk/client-kms';
import { getAwsEmulator } from '@podmin/testing';
import { readPublicKey } from '@podmin/util-trust';
import { AwsKmsKeys, createKmsClient } from './aws-kms-keys';

describe('AwsKmsKeys against the KMS emulator', () => {
  let client: KMSClient;
  let keys: AwsKmsKeys;

  beforeAll(async () => {
    const emulator = await getAwsEmulator();
    client = createKmsClient({
      region: emulator.region,
      endpoint: emulator.endpoint,
      credentials: emulator.credentials,
    });
    keys = new AwsKmsKeys(() => client);
  }, 120_000);
  afterAll(() => client.destroy());

  it('describes an ECC_NIST_P256 signing key, reads its public key, and signs RAW messages', async () => {
    const created = await client.send(
      new CreateKeyCommand({ KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY' }),
    );
    const arn = created.KeyMetadata!.Arn!;
    expect(await keys.describe(arn)).toEqual({
      arn,
      keySpec: 'ECC_NIST_P256',
      keyUsage: 'SIGN_VERIFY',
      signingAlgorithms: ['ECDSA_SHA_256'],
      enabled: true,
    });
    const der = await keys.publicKey(arn);
    expect(readPublicKey(der, 'kms').algorithm).toBe('ecdsa-p256-sha256');
    const message = Buffer.from('podmin desired-state v1\n');
    const signature = await keys.sign(arn, message);
    const key = createPublicKey({ key: der, format: 'der', type: 'spki' });
    expect(verify('sha256', message, key, signature)).toBe(true);
    expect(verify('sha256', Buffer.from('other'), key, signature)).toBe(false);
  });

  it('shows a symmetric key for what it is, and an unknown key as NOT_FOUND', async () => {
    const created = await client.send(new CreateKeyCommand({}));
    const facts = await keys.describe(created.KeyMetadata!.Arn!);
    expect(facts.keySpec).toBe('SYMMETRIC_DEFAULT');
    expect(facts.signingAlgorithms).toEqual([]);
    await expect(
      keys.describe('arn:aws:kms:us-east-1:123456789012:key/00000000-0000-0000-0000-000000000000'),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});
