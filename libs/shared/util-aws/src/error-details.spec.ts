/** An error shaped as AWS SDK v3 service exceptions are (their classes live in data-access). */
function sdkError(name: string, status: number, message: string, extra: object = {}): Error {
  return Object.assign(new Error(message), {
    name,
    $fault: status >= 500 ? 'server' : 'client',
    $metadata: { httpStatusCode: status },
    ...extra,
  });
}
import { awsErrorDetails, describeAwsError, NETWORK_ERROR_CODES } from './error-details';

describe('awsErrorDetails', () => {
  it('reads an S3 exception: its code, status and message', () => {
    const err = sdkError('NoSuchKey', 404, 'The specified key does not exist.');
    expect(awsErrorDetails(err)).toEqual({
      name: 'NoSuchKey',
      status: 404,
      message: 'The specified key does not exist.',
      errno: undefined,
    });
  });

  it("prefers an XML service's Code over the exception's name", () => {
    const err = sdkError('S3ServiceException', 403, 'denied', { Code: 'AccessDenied' });
    expect(awsErrorDetails(err).name).toBe('AccessDenied');
    expect(describeAwsError(awsErrorDetails(err))).toBe('AccessDenied, HTTP 403');
  });

  it('reads an SSM exception by its name', () => {
    const err = sdkError('ParameterNotFound', 400, 'no such parameter');
    expect(awsErrorDetails(err)).toMatchObject({ name: 'ParameterNotFound', status: 400 });
  });

  it('reads a network error: errno, no status', () => {
    const err = Object.assign(new Error('connect ECONNREFUSED ::1:9'), { code: 'ECONNREFUSED' });
    const details = awsErrorDetails(err);
    expect(details).toEqual({
      name: 'Error',
      status: undefined,
      message: 'connect ECONNREFUSED ::1:9',
      errno: 'ECONNREFUSED',
    });
    expect(NETWORK_ERROR_CODES.has(details.errno ?? '')).toBe(true);
    expect(describeAwsError(details)).toBe('Error');
  });

  it('gives only a message for what is not an object', () => {
    expect(awsErrorDetails('boom')).toEqual({
      name: undefined,
      status: undefined,
      message: 'boom',
      errno: undefined,
    });
    expect(describeAwsError(awsErrorDetails(undefined))).toBe('');
  });
});
