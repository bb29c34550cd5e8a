import { readCliEnvironment } from './env';

describe('readCliEnvironment', () => {
  it('prefers service-specific endpoints and ignores empty values', () => {
    const env = {
      AWS_ENDPOINT_URL: 'http://a',
      AWS_ENDPOINT_URL_S3: 'http://s3',
      AWS_REGION: '',
      AWS_DEFAULT_REGION: 'eu-west-1',
    };
    expect(readCliEnvironment(env)).toEqual({
      s3Endpoint: 'http://s3',
      ssmEndpoint: 'http://a',
      secretsManagerEndpoint: 'http://a',
      ec2Endpoint: 'http://a',
      kmsEndpoint: 'http://a',
      awsRegion: 'eu-west-1',
      processEnv: env,
    });
  });

  it('reads the infrastructure settings', () => {
    const env = readCliEnvironment({
      AWS_ENDPOINT_URL_EC2: 'http://ec2',
      PODMIN_TF_CMD: '/opt/tofu',
      TF_PLUGIN_CACHE_DIR: '/var/cache/tf',
      PODMIN_TEST_DEBIAN_AMI_OWNER: '123456789012',
      PODMIN_TEST_INFRA_MODULE_DIR: '/tmp/module',
      PODMIN_TEST_DEPENDENCY_BASE_URL: 'http://127.0.0.1:9',
    });
    expect(env).toMatchObject({
      ec2Endpoint: 'http://ec2',
      tfCmd: '/opt/tofu',
      tfPluginCacheDir: '/var/cache/tf',
      testDebianAmiOwner: '123456789012',
      testInfraModuleDir: '/tmp/module',
      testDependencyBaseUrl: 'http://127.0.0.1:9',
    });
    expect(env.processEnv?.['PODMIN_TF_CMD']).toBe('/opt/tofu');
  });

  it('reads the install test overrides only when set', () => {
    expect(readCliEnvironment({})).not.toHaveProperty('testCloudflaredPin');
    expect(
      readCliEnvironment({
        PODMIN_TEST_UPSTREAM_REGISTRY_URL: 'http://127.0.0.1:7',
        PODMIN_TEST_CLOUDFLARED_PIN: '1.0.0@sha256:00',
      }),
    ).toMatchObject({
      testUpstreamRegistryUrl: 'http://127.0.0.1:7',
      testCloudflaredPin: '1.0.0@sha256:00',
    });
  });

  it('reads the KMS endpoint and the deployer signer settings', () => {
    expect(
      readCliEnvironment({
        AWS_ENDPOINT_URL: 'http://a',
        AWS_ENDPOINT_URL_KMS: 'http://kms',
        PODMIN_SIGNING_KEY: '/keys/alice.key',
        PODMIN_KMS_KEY: 'arn:aws:kms:us-east-1:123456789012:key/k',
        PODMIN_SIGNER: 'ci',
      }),
    ).toMatchObject({
      kmsEndpoint: 'http://kms',
      signingKey: '/keys/alice.key',
      kmsKey: 'arn:aws:kms:us-east-1:123456789012:key/k',
      signer: 'ci',
    });
    expect(readCliEnvironment({ PODMIN_SIGNER: '' })).not.toHaveProperty('signer');
  });
});
