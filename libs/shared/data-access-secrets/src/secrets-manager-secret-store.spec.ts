import {
  InvalidRequestException,
  ResourceExistsException,
  ResourceNotFoundException,
  SecretsManagerServiceException,
} from '@aws-sdk/client-secrets-manager';
import { FakeAwsClient, itTranslatesEach, serviceErrorsOf } from './__fixtures__/aws-fakes';
import {
  SecretsManagerSecretStore,
  translateSecretsManagerError,
} from './secrets-manager-secret-store';

/** A Secrets Manager service error as the SDK builds it from a response. */
const serviceError = serviceErrorsOf(SecretsManagerServiceException);

const markedDeleted = () =>
  new InvalidRequestException({
    message: "You can't perform this operation on the secret because it was marked for deletion.",
    $metadata: { httpStatusCode: 400 },
  });

function store(fake: FakeAwsClient): SecretsManagerSecretStore {
  return new SecretsManagerSecretStore(fake as never, { pageSize: 2 });
}

const name = '/demo/default/web/oauth-token';

describe('translateSecretsManagerError', () => {
  const translate = (err: unknown, doing: string) => translateSecretsManagerError(err, doing, name);
  itTranslatesEach(translate, 'reading it', [
    [
      'ResourceNotFoundException',
      new ResourceNotFoundException({ message: 'nope', $metadata: {} }),
      'NOT_FOUND',
    ],
    [
      'ResourceExistsException',
      new ResourceExistsException({ message: 'exists', $metadata: {} }),
      'ALREADY_EXISTS',
    ],
    ['InvalidRequestException (marked for deletion)', markedDeleted(), 'PRECONDITION_FAILED'],
    [
      'InvalidRequestException (other)',
      new InvalidRequestException({ message: 'rotation in progress', $metadata: {} }),
      'INVALID_ARGUMENT',
    ],
    ['AccessDeniedException', serviceError('AccessDeniedException', 400), 'ACCESS_DENIED'],
    ['ExpiredTokenException', serviceError('ExpiredTokenException', 400), 'ACCESS_DENIED'],
    ['InternalServiceError', serviceError('InternalServiceError', 500), 'IO_ERROR'],
    ['ETIMEDOUT', Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' }), 'IO_ERROR'],
  ]);

  it('explains a pending deletion and how to undo it', () => {
    const translated = translateSecretsManagerError(markedDeleted(), 'reading it', name);
    expect(translated.message).toContain(`${name} is scheduled for deletion`);
    expect(translated.hint).toContain('restore');
  });
});

describe('SecretsManagerSecretStore', () => {
  it('creates text as SecretString and anything else as SecretBinary', async () => {
    const fake = new FakeAwsClient();
    await store(fake).create(name, Buffer.from('tok'), { kmsKeyId: 'alias/k' });
    await store(fake).create(name, Buffer.from([0xff, 0x00]));
    expect(fake.sent[0]).toEqual({
      command: 'CreateSecretCommand',
      input: { Name: name, SecretString: 'tok', KmsKeyId: 'alias/k' },
    });
    expect(fake.sent[1]?.input['SecretBinary']).toEqual(new Uint8Array([0xff, 0x00]));
    expect(fake.sent[1]?.input['SecretString']).toBeUndefined();
  });

  it('reports a create over a deleted secret as scheduled for deletion', async () => {
    const fake = new FakeAwsClient();
    fake.answers.push(new ResourceExistsException({ message: 'exists', $metadata: {} }), {
      DeletedDate: new Date('2030-01-01T00:00:00Z'),
    });
    await expect(store(fake).create(name, Buffer.from('x'))).rejects.toMatchObject({
      code: 'PRECONDITION_FAILED',
    });
    const live = new FakeAwsClient();
    live.answers.push(new ResourceExistsException({ message: 'exists', $metadata: {} }), {});
    await expect(store(live).create(name, Buffer.from('x'))).rejects.toMatchObject({
      code: 'ALREADY_EXISTS',
    });
  });

  it('checks for a pending deletion before PutSecretValue', async () => {
    const fake = new FakeAwsClient();
    fake.answers.push({ DeletedDate: new Date('2030-01-01T00:00:00Z') });
    await expect(store(fake).update(name, Buffer.from('x'))).rejects.toMatchObject({
      code: 'PRECONDITION_FAILED',
    });
    expect(fake.sent.map((s) => s.command)).toEqual(['DescribeSecretCommand']);
    const ok = new FakeAwsClient();
    await store(ok).update(name, Buffer.from('x'));
    expect(ok.sent[1]).toEqual({
      command: 'PutSecretValueCommand',
      input: { SecretId: name, SecretString: 'x' },
    });
  });

  it('checks existence with DescribeSecret only: absent, live, scheduled for deletion', async () => {
    const fake = new FakeAwsClient();
    fake.answers.push(
      new ResourceNotFoundException({ message: 'nope', $metadata: {} }),
      { Name: name },
      { Name: name, DeletedDate: new Date('2030-01-01T00:00:00Z') },
    );
    expect(await store(fake).exists(name)).toBe(false);
    expect(await store(fake).exists(name)).toBe(true);
    await expect(store(fake).exists(name)).rejects.toMatchObject({ code: 'PRECONDITION_FAILED' });
    expect(fake.sent).toEqual(
      Array.from({ length: 3 }, () => ({
        command: 'DescribeSecretCommand',
        input: { SecretId: name },
      })),
    );
  });

  it('returns SecretString bytes or SecretBinary', async () => {
    const fake = new FakeAwsClient();
    fake.answers.push({ SecretString: 'tok' }, { SecretBinary: new Uint8Array([1, 2]) });
    expect((await store(fake).get(name)).toString()).toBe('tok');
    expect([...(await store(fake).get(name))]).toEqual([1, 2]);
  });

  it('deletes with a 30-day window, restores, and destroys without recovery', async () => {
    const fake = new FakeAwsClient();
    await store(fake).delete(name);
    await store(fake).restore(name);
    await store(fake).destroy(name);
    expect(fake.sent).toEqual([
      { command: 'DeleteSecretCommand', input: { SecretId: name, RecoveryWindowInDays: 30 } },
      { command: 'RestoreSecretCommand', input: { SecretId: name } },
      { command: 'DescribeSecretCommand', input: { SecretId: name } },
      {
        command: 'DeleteSecretCommand',
        input: { SecretId: name, ForceDeleteWithoutRecovery: true },
      },
    ]);
  });

  it('reports destroying a missing secret as NOT_FOUND instead of succeeding silently', async () => {
    const fake = new FakeAwsClient();
    fake.answers.push(new ResourceNotFoundException({ message: 'nope', $metadata: {} }));
    await expect(store(fake).destroy(name)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(fake.sent).toHaveLength(1);
  });

  it('lists live secrets under the exact prefix across every page', async () => {
    const fake = new FakeAwsClient();
    fake.answers.push(
      {
        SecretList: [
          { Name: '/demo/default/web/b' },
          { Name: '/DEMO/default/web/x' },
          { Name: '/demo/default/web/gone', DeletedDate: new Date() },
        ],
        NextToken: 'n',
      },
      { SecretList: [{ Name: '/demo/default/web/a' }] },
    );
    expect(await store(fake).list('/demo/')).toEqual([
      '/demo/default/web/a',
      '/demo/default/web/b',
    ]);
    expect(fake.sent[1]?.input).toEqual({
      Filters: [{ Key: 'name', Values: ['/demo/'] }],
      IncludePlannedDeletion: false,
      MaxResults: 2,
      NextToken: 'n',
    });
  });

  it('enforces the 64 KiB limit without calling AWS', async () => {
    const fake = new FakeAwsClient();
    await expect(store(fake).create(name, Buffer.alloc(65537))).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    expect(fake.sent).toEqual([]);
  });
});
