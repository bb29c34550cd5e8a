import { PodminError } from '@podmin/util-errors';
import { AwsKmsKeys, regionOfKmsArn, translateKmsError } from './aws-kms-keys';

/** An SDK-shaped error: a name and the HTTP status of the answer (none: no answer). */
function sdkError(name: string, status?: number, extra: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(`${name} happened`), {
    name,
    ...(status === undefined ? {} : { $metadata: { httpStatusCode: status } }),
    ...extra,
  });
}

describe('translateKmsError', () => {
  it.each([
    [sdkError('NotFoundException', 400), 'NOT_FOUND'],
    [sdkError('DisabledException', 400), 'PRECONDITION_FAILED'],
    [sdkError('KMSInvalidStateException', 400), 'PRECONDITION_FAILED'],
    [sdkError('InvalidKeyUsageException', 400), 'INVALID_ARGUMENT'],
    [sdkError('AccessDeniedException', 400), 'ACCESS_DENIED'],
    [sdkError('Whatever', 403), 'ACCESS_DENIED'],
    [sdkError('Error', undefined, { code: 'ECONNREFUSED' }), 'IO_ERROR'],
    [sdkError('ThrottlingException', 400), 'IO_ERROR'],
    [sdkError('KMSInternalException', 500), 'IO_ERROR'],
    [sdkError('SomethingElse', 400), 'INVALID_ARGUMENT'],
  ])('maps %s to %s, keeping the cause', (err, code) => {
    const translated = translateKmsError(err, 'signing');
    expect(translated).toBeInstanceOf(PodminError);
    expect(translated.code).toBe(code);
    expect(translated.message.startsWith('signing: ')).toBe(true);
    expect(translated.cause).toBe(err);
  });

  it('passes podmin errors through', () => {
    const err = new PodminError('NOT_FOUND', 'x');
    expect(translateKmsError(err, 'y')).toBe(err);
  });
});

describe('AwsKmsKeys', () => {
  it('builds one client per region the ARNs name and translates what they throw', async () => {
    const regions: string[] = [];
    const keys = new AwsKmsKeys((region) => {
      regions.push(region);
      return { send: () => Promise.reject(sdkError('NotFoundException', 400)) };
    });
    const arn = (region: string) => `arn:aws:kms:${region}:123456789012:key/k`;
    await expect(keys.describe(arn('eu-west-1'))).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(keys.publicKey(arn('eu-west-1'))).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(keys.sign(arn('us-east-2'), Buffer.from('m'))).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    expect(regions).toEqual(['eu-west-1', 'us-east-2']);
    expect(regionOfKmsArn(arn('ap-south-1'))).toBe('ap-south-1');
    expect(() => regionOfKmsArn('key/k')).toThrow(/names no region/);
  });
});
