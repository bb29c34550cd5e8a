import { hasCode } from '@podmin/util-errors';
import { parseEngineVersion, stateLockId } from './engine-output';

describe('parseEngineVersion', () => {
  it('accepts OpenTofu and Terraform 1.11 and newer', () => {
    expect(
      parseEngineVersion('{"terraform_version":"1.11.4","platform":"linux_amd64"}', 'terraform'),
    ).toBe('1.11.4');
    expect(parseEngineVersion('{"terraform_version":"1.12.0-beta1"}', 'tofu')).toBe('1.12.0-beta1');
  });

  it('rejects older engines and output without a version, naming the pair', () => {
    for (const text of [
      '{"terraform_version":"1.10.5"}',
      '{"platform":"x"}',
      'Terraform v1.11.0',
    ]) {
      let caught: unknown;
      try {
        parseEngineVersion(text, '/usr/bin/tofu');
      } catch (err) {
        caught = err;
      }
      expect(hasCode(caught, 'INVALID_ARGUMENT')).toBe(true);
      expect((caught as Error).message).toContain('OpenTofu/Terraform (/usr/bin/tofu)');
    }
    expect(() => parseEngineVersion('{"terraform_version":"1.10.5"}', 'tofu')).toThrow(
      /older than the required 1.11/,
    );
  });
});

describe('stateLockId', () => {
  const lockError = `
\x1b[31m╷\x1b[0m
│ Error: Error acquiring the state lock
│
│ Error message: operation error S3: PutObject, https response error StatusCode: 412
│ Lock Info:
│   ID:        0f5d4c1e-2a7b-3c8d-9e0f-112233445566
│   Path:      podmin-demo/tfstate/podmin.tfstate
│   Operation: OperationTypeApply
│   Who:       ops@laptop
`;

  it('reads the lock ID from the engine lock error', () => {
    expect(stateLockId(lockError)).toBe('0f5d4c1e-2a7b-3c8d-9e0f-112233445566');
  });

  it('is undefined for other errors', () => {
    expect(
      stateLockId('Error: Invalid provider configuration\nLock Info:\n  ID: x'),
    ).toBeUndefined();
    expect(stateLockId('')).toBeUndefined();
  });
});
