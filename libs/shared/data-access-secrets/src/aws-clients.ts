import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SSMClient } from '@aws-sdk/client-ssm';
import { awsClientConfig, type AwsClientOptions } from '@podmin/util-aws';

/** How to build an AWS secrets client for a context (`endpoint`: e.g. from AWS_ENDPOINT_URL_SSM). */
export type AwsSecretsClientOptions = AwsClientOptions;

/** Creates an SSM client (default credential chain unless credentials are given). */
export function createSsmClient(options: AwsSecretsClientOptions): SSMClient {
  return new SSMClient(awsClientConfig(options));
}

/** Creates a Secrets Manager client (default credential chain unless credentials are given). */
export function createSecretsManagerClient(options: AwsSecretsClientOptions): SecretsManagerClient {
  return new SecretsManagerClient(awsClientConfig(options));
}
