import { PodminError } from '@podmin/util-errors';
import {
  PROVIDER_RULES,
  assertRecoverySupported,
  assertValueAllowed,
  scheduledForDeletionError,
} from './provider-rules';

function failure(fn: () => unknown): PodminError {
  try {
    fn();
  } catch (err) {
    if (err instanceof PodminError) return err;
    throw err;
  }
  throw new Error('expected a failure');
}

describe('provider rules', () => {
  it('states the spec limits', () => {
    expect(PROVIDER_RULES['aws-parameter-store']).toEqual({
      maxValueBytes: 4096,
      utf8Only: true,
      recoveryWindowDays: undefined,
    });
    expect(PROVIDER_RULES['aws-secrets-manager']).toEqual({
      maxValueBytes: 65536,
      utf8Only: false,
      recoveryWindowDays: 30,
    });
  });

  it('limits Parameter Store to non-empty UTF-8 of at most 4 KiB', () => {
    const name = '/demo/default/web/k';
    expect(() =>
      assertValueAllowed('aws-parameter-store', name, Buffer.alloc(4096, 'a')),
    ).not.toThrow();
    const big = failure(() =>
      assertValueAllowed('aws-parameter-store', name, Buffer.alloc(4097, 'a')),
    );
    expect(big.code).toBe('INVALID_ARGUMENT');
    expect(big.message).toContain('4097 bytes');
    expect(big.hint).toContain('aws-secrets-manager');
    const binary = failure(() =>
      assertValueAllowed('aws-parameter-store', name, Buffer.from([0xc3, 0x28])),
    );
    expect(binary.message).toContain('UTF-8');
    expect(
      failure(() => assertValueAllowed('aws-parameter-store', name, Buffer.alloc(0))).code,
    ).toBe('INVALID_ARGUMENT');
  });

  it('lets Secrets Manager store binary up to 64 KiB', () => {
    const name = '/demo/default/web/k';
    expect(() =>
      assertValueAllowed('aws-secrets-manager', name, Buffer.alloc(65536, 0xff)),
    ).not.toThrow();
    expect(
      failure(() => assertValueAllowed('aws-secrets-manager', name, Buffer.alloc(65537))).code,
    ).toBe('INVALID_ARGUMENT');
  });

  it('rejects delete and restore without a recovery window, pointing at destroy', () => {
    const err = failure(() => assertRecoverySupported('aws-parameter-store', 'delete', '/d/n/p/k'));
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect(err.message).toContain('no recovery window');
    expect(err.hint).toContain('destroy');
    expect(
      failure(() => assertRecoverySupported('aws-parameter-store', 'restore', '/d/n/p/k')).code,
    ).toBe('INVALID_ARGUMENT');
    expect(assertRecoverySupported('aws-secrets-manager', 'delete', '/d/n/p/k')).toBe(30);
  });

  it('describes a pending deletion as a user-fault PRECONDITION_FAILED with a hint', () => {
    const err = scheduledForDeletionError('reading x', '/d/n/p/k', {
      deletionDate: new Date('2030-01-31T00:00:00Z'),
    });
    expect(err.code).toBe('PRECONDITION_FAILED');
    expect(err.fault).toBe('user');
    expect(err.message).toContain('scheduled for deletion');
    expect(err.message).toContain('2030-01-31');
    expect(err.hint).toContain('restore');
  });
});
