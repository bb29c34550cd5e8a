import { PodminError } from '@podmin/util-errors';
import { translateEc2Error } from './ec2-errors';

const sdkError = (name: string, message = 'boom') => Object.assign(new Error(message), { name });

describe('translateEc2Error', () => {
  it.each([
    ['UnauthorizedOperation', 'ACCESS_DENIED'],
    ['AuthFailure', 'ACCESS_DENIED'],
    ['RequestLimitExceeded', 'SERVICE_UNAVAILABLE'],
    ['Throttling', 'SERVICE_UNAVAILABLE'],
    ['TimeoutError', 'SERVICE_UNAVAILABLE'],
    ['InvalidParameterValue', 'INTERNAL'],
  ])('maps %s to %s and keeps the cause', (name, code) => {
    const cause = sdkError(name);
    const err = translateEc2Error(cause, 'listing zones');
    expect(err.code).toBe(code);
    expect(err.message).toBe(`listing zones: boom (${name})`);
    expect(err.cause).toBe(cause);
  });

  it('maps a refused connection and passes PodminErrors through', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    expect(translateEc2Error(refused, 'x').code).toBe('SERVICE_UNAVAILABLE');
    const wrapped = new Error('AWS SDK error wrapper for Error: connect ECONNREFUSED 127.0.0.1:9');
    expect(translateEc2Error(wrapped, 'x').code).toBe('SERVICE_UNAVAILABLE');
    const own = new PodminError('NOT_FOUND', 'x');
    expect(translateEc2Error(own, 'y')).toBe(own);
  });
});
