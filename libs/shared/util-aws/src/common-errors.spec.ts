import { PodminError } from '@podmin/util-errors';
import { translateCommonAwsError } from './common-errors';

/** An error shaped as AWS SDK v3 service exceptions are. */
function sdkError(name: string, status: number, message = 'refused'): Error {
  return Object.assign(new Error(message), {
    name,
    $fault: status >= 500 ? 'server' : 'client',
    $metadata: { httpStatusCode: status },
  });
}

const refused = Object.assign(new Error('connect ECONNREFUSED ::1:9'), { code: 'ECONNREFUSED' });

describe('translateCommonAwsError', () => {
  it.each([
    ['refused credentials', sdkError('UnrecognizedClientException', 400), 'ACCESS_DENIED'],
    ['a bare 403', sdkError('Unknown', 403), 'ACCESS_DENIED'],
    ['no answer', refused, 'IO_ERROR'],
    ['a client error', sdkError('ValidationException', 400), 'INVALID_ARGUMENT'],
    ['throttling', sdkError('ThrottlingException', 400), 'IO_ERROR'],
    ['a server error', sdkError('InternalFailure', 500), 'IO_ERROR'],
  ])('classifies %s', (_, err, code) => {
    const translated = translateCommonAwsError(err, 'reading x', 'AWS Test');
    expect(translated.code).toBe(code);
    expect(translated.message).toMatch(/^reading x: /);
    expect(translated.cause).toBe(err);
  });

  it('gives the default credentials hint, or the adapter’s own hints', () => {
    const denied = sdkError('AccessDeniedException', 400);
    expect(translateCommonAwsError(denied, 'x', 'AWS Test').hint).toBe(
      'check the AWS credentials and that their policy allows AWS Test on this name',
    );
    const hints = { accessDenied: 'allow kms:Sign', unreachable: 'check the network' };
    expect(translateCommonAwsError(denied, 'x', 'AWS Test', hints).hint).toBe('allow kms:Sign');
    expect(translateCommonAwsError(refused, 'x', 'AWS Test').hint).toBeUndefined();
    expect(translateCommonAwsError(refused, 'x', 'AWS Test', hints).hint).toBe('check the network');
  });

  it('passes a PodminError through', () => {
    const err = new PodminError('NOT_FOUND', 'gone');
    expect(translateCommonAwsError(err, 'x', 'AWS Test')).toBe(err);
  });
});
