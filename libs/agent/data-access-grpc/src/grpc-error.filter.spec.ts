import { status } from '@grpc/grpc-js';
import { grpcStatusOf } from './grpc-error.filter';

describe('grpcStatusOf', () => {
  it.each([
    ['INVALID_MANIFEST', status.INVALID_ARGUMENT],
    ['OBJECT_NOT_FOUND', status.NOT_FOUND],
    ['PRECONDITION_FAILED', status.FAILED_PRECONDITION],
    ['CONFLICT', status.ABORTED],
    ['SERVICE_UNAVAILABLE', status.UNAVAILABLE],
    ['ACCESS_DENIED', status.PERMISSION_DENIED],
    ['INTERNAL', status.INTERNAL],
  ] as const)('%s → %s', (code, expected) => {
    expect(grpcStatusOf(code)).toBe(expected);
  });
});
