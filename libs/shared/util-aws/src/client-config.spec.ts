import { awsClientConfig } from './client-config';

describe('awsClientConfig', () => {
  it('gives only the region by default', () => {
    expect(awsClientConfig({ region: 'eu-west-1' })).toEqual({ region: 'eu-west-1' });
  });

  it('uses the dual-stack endpoint unless an endpoint is given', () => {
    expect(awsClientConfig({ region: 'eu-west-1', dualStack: true })).toEqual({
      region: 'eu-west-1',
      useDualstackEndpoint: true,
    });
    expect(
      awsClientConfig(
        { region: 'eu-west-1', dualStack: true, endpoint: 'http://[::1]:5001' },
        { forcePathStyle: true },
      ),
    ).toEqual({ region: 'eu-west-1', endpoint: 'http://[::1]:5001', forcePathStyle: true });
  });

  it('carries the profile, static credentials and timeouts', () => {
    expect(
      awsClientConfig({
        region: 'us-east-1',
        profile: 'ci',
        credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
        timeouts: { connectMs: 1000, idleMs: 5000 },
      }),
    ).toEqual({
      region: 'us-east-1',
      profile: 'ci',
      credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
      requestHandler: { connectionTimeout: 1000, socketTimeout: 5000 },
    });
  });
});
