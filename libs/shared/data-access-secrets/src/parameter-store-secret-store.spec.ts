import {
  AccessDeniedException,
  ParameterAlreadyExists,
  ParameterNotFound,
  SSMServiceException,
} from '@aws-sdk/client-ssm';
import { PodminError } from '@podmin/util-errors';
import { FakeAwsClient, itTranslatesEach, serviceErrorsOf } from './__fixtures__/aws-fakes';
import { ParameterStoreSecretStore, translateSsmError } from './parameter-store-secret-store';

/** An SSM service error as the SDK builds it from a response. */
const serviceError = serviceErrorsOf(SSMServiceException);

function store(fake: FakeAwsClient): ParameterStoreSecretStore {
  return new ParameterStoreSecretStore(fake as never, { pageSize: 2 });
}

describe('translateSsmError', () => {
  itTranslatesEach(translateSsmError, 'reading /d/n/p/k', [
    ['ParameterNotFound', new ParameterNotFound({ message: 'nope', $metadata: {} }), 'NOT_FOUND'],
    [
      'ParameterAlreadyExists',
      new ParameterAlreadyExists({ message: 'exists', $metadata: {} }),
      'ALREADY_EXISTS',
    ],
    [
      'AccessDeniedException',
      new AccessDeniedException({
        message: 'denied',
        Message: 'denied',
        $metadata: { httpStatusCode: 400 },
      }),
      'ACCESS_DENIED',
    ],
    [
      'UnrecognizedClientException',
      serviceError('UnrecognizedClientException', 400),
      'ACCESS_DENIED',
    ],
    ['bare 403', serviceError('Unknown', 403), 'ACCESS_DENIED'],
    ['ValidationException', serviceError('ValidationException', 400), 'INVALID_ARGUMENT'],
    ['ThrottlingException', serviceError('ThrottlingException', 400), 'IO_ERROR'],
    ['InternalServerError', serviceError('InternalServerError', 500), 'IO_ERROR'],
    [
      'ECONNREFUSED',
      Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      'IO_ERROR',
    ],
    ['a non-Error value', 'boom', 'IO_ERROR'],
  ]);

  it('passes PodminErrors through and hints at credentials on ACCESS_DENIED', () => {
    const original = new PodminError('INVALID_ARGUMENT', 'x');
    expect(translateSsmError(original, 'y')).toBe(original);
    expect(translateSsmError(serviceError('AccessDeniedException', 400), 'y').hint).toContain(
      'credentials',
    );
  });
});

describe('ParameterStoreSecretStore', () => {
  const name = '/demo/default/web/database-url';

  it('creates SecureString parameters without overwriting', async () => {
    const fake = new FakeAwsClient();
    await store(fake).create(name, Buffer.from('v'), { description: 'db', kmsKeyId: 'alias/k' });
    expect(fake.sent).toEqual([
      {
        command: 'PutParameterCommand',
        input: {
          Name: name,
          Value: 'v',
          Type: 'SecureString',
          Overwrite: false,
          Description: 'db',
          KeyId: 'alias/k',
        },
      },
    ]);
  });

  it('updates only after the parameter is found', async () => {
    const fake = new FakeAwsClient();
    fake.answers.push(new ParameterNotFound({ message: 'nope', $metadata: {} }));
    await expect(store(fake).update(name, Buffer.from('v'))).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    expect(fake.sent.map((s) => s.command)).toEqual(['GetParameterCommand']);
    const ok = new FakeAwsClient();
    await store(ok).update(name, Buffer.from('v2'));
    expect(ok.sent[1]).toEqual({
      command: 'PutParameterCommand',
      input: { Name: name, Value: 'v2', Type: 'SecureString', Overwrite: true },
    });
  });

  it('reads with decryption and accepts the three parameter types', async () => {
    for (const type of ['String', 'StringList', 'SecureString']) {
      const fake = new FakeAwsClient();
      fake.answers.push({ Parameter: { Name: name, Type: type, Value: 'a,b' } });
      expect((await store(fake).get(name)).toString()).toBe('a,b');
      expect(fake.sent[0]?.input).toEqual({ Name: name, WithDecryption: true });
    }
  });

  it('checks existence with DescribeParameters on the exact name, never reading the value', async () => {
    const fake = new FakeAwsClient();
    fake.answers.push({ Parameters: [{ Name: name }] }, { Parameters: [] });
    expect(await store(fake).exists(name)).toBe(true);
    expect(await store(fake).exists(name)).toBe(false);
    expect(fake.sent.map((s) => s.command)).toEqual([
      'DescribeParametersCommand',
      'DescribeParametersCommand',
    ]);
    expect(fake.sent[0]?.input).toEqual({
      ParameterFilters: [{ Key: 'Name', Option: 'Equals', Values: [name] }],
    });
  });

  it('lists by recursive path filter across every page', async () => {
    const fake = new FakeAwsClient();
    fake.answers.push(
      {
        Parameters: [{ Name: '/demo/default/web/b' }, { Name: '/demo/default/web/a' }],
        NextToken: 't1',
      },
      { Parameters: [{ Name: '/demo/x/web/c' }] },
    );
    expect(await store(fake).list('/demo/')).toEqual([
      '/demo/default/web/a',
      '/demo/default/web/b',
      '/demo/x/web/c',
    ]);
    expect(fake.sent.map((s) => s.input)).toEqual([
      {
        ParameterFilters: [{ Key: 'Path', Option: 'Recursive', Values: ['/demo'] }],
        MaxResults: 2,
      },
      {
        ParameterFilters: [{ Key: 'Path', Option: 'Recursive', Values: ['/demo'] }],
        MaxResults: 2,
        NextToken: 't1',
      },
    ]);
  });

  it('enforces the provider rules without calling AWS', async () => {
    const fake = new FakeAwsClient();
    const s = store(fake);
    await expect(s.create(name, Buffer.alloc(4097, 'a'))).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    await expect(s.create(name, Buffer.from([0xff]))).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    await expect(s.delete(name)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(s.restore(name)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(s.get('/demo/_system/web/k')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect(fake.sent).toEqual([]);
  });

  it('destroys with DeleteParameter and maps a missing one to NOT_FOUND', async () => {
    const fake = new FakeAwsClient();
    fake.answers.push(new ParameterNotFound({ message: 'nope', $metadata: {} }));
    await expect(store(fake).destroy(name)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(fake.sent).toEqual([{ command: 'DeleteParameterCommand', input: { Name: name } }]);
  });
});
