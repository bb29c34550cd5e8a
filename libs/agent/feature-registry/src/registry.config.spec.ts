import { ValidationError } from '@podmin/util-errors';
import { parseRegistryConfig } from './registry.config';

describe('parseRegistryConfig', () => {
  it('reads the agent flags with a loopback default', () => {
    const config = parseRegistryConfig(
      ['--provider', 'local', '--bucket', 'b', '--cluster', 'dev'],
      {},
      '/work',
    );
    expect(config).toEqual({
      provider: 'local',
      bucket: '/work/b',
      region: undefined,
      cluster: 'dev',
      listen: { host: '127.0.0.1', port: 5000 },
      s3Endpoint: undefined,
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('takes an S3 endpoint override and [::1]', () => {
    const config = parseRegistryConfig(
      [
        '--provider=aws',
        '--bucket=my-bucket',
        '--region=eu-west-1',
        '--cluster=c1',
        '--listen=[::1]:0',
      ],
      { AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:9000' },
      '/',
    );
    expect(config.listen).toEqual({ host: '::1', port: 0 });
    expect(config.s3Endpoint).toBe('http://127.0.0.1:9000');
  });

  it('lists every bad value at once', () => {
    let error: unknown;
    try {
      parseRegistryConfig(
        [
          '--provider',
          'aws',
          '--bucket',
          'Bad_Bucket',
          '--listen',
          '0.0.0.0:5000',
          '--nodegroup',
          'x',
          'extra',
        ],
        { AWS_ENDPOINT_URL_S3: 'ftp://x' },
        '/',
      );
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).problems.map((p) => p.field)).toEqual([
      '--nodegroup',
      'arguments',
      '--bucket',
      '--region',
      '--cluster',
      '--listen',
      'AWS_ENDPOINT_URL_S3',
    ]);
  });
});
