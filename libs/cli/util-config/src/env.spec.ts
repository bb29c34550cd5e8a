import { readCliEnvironment } from './env';

describe('readCliEnvironment', () => {
  it('prefers service-specific endpoints and ignores empty values', () => {
    expect(
      readCliEnvironment({
        AWS_ENDPOINT_URL: 'http://a',
        AWS_ENDPOINT_URL_S3: 'http://s3',
        AWS_REGION: '',
        AWS_DEFAULT_REGION: 'eu-west-1',
      }),
    ).toEqual({
      s3Endpoint: 'http://s3',
      ssmEndpoint: 'http://a',
      secretsManagerEndpoint: 'http://a',
      awsRegion: 'eu-west-1',
    });
  });
});
