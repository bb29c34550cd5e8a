import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SSMClient } from '@aws-sdk/client-ssm';

/** How to build an AWS secrets client for a context. */
export interface AwsSecretsClientOptions {
  /** AWS region, e.g. `eu-west-1`. */
  region: string;
  /** Named profile from the shared AWS config/credentials files; default chain otherwise. */
  profile?: string;
  /** Custom endpoint (an emulator), e.g. from AWS_ENDPOINT_URL_SSM. */
  endpoint?: string;
  /** Use the regional dual-stack (IPv4 and IPv6) endpoint; ignored when `endpoint` is set. */
  dualStack?: boolean;
  /** Static credentials, for emulators and tests; the default provider chain when omitted. */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** Bounds on connecting and on a silent socket (unset: the SDK's, none). */
  timeouts?: { readonly connectMs: number; readonly idleMs: number };
}

function clientConfig(options: AwsSecretsClientOptions) {
  return {
    region: options.region,
    ...(options.profile === undefined ? {} : { profile: options.profile }),
    ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
    ...(options.endpoint === undefined
      ? options.dualStack === true
        ? { useDualstackEndpoint: true }
        : {}
      : { endpoint: options.endpoint }),
    ...(options.timeouts === undefined
      ? {}
      : {
          requestHandler: {
            connectionTimeout: options.timeouts.connectMs,
            socketTimeout: options.timeouts.idleMs,
          },
        }),
  };
}

/** Creates an SSM client (default credential chain unless credentials are given). */
export function createSsmClient(options: AwsSecretsClientOptions): SSMClient {
  return new SSMClient(clientConfig(options));
}

/** Creates a Secrets Manager client (default credential chain unless credentials are given). */
export function createSecretsManagerClient(options: AwsSecretsClientOptions): SecretsManagerClient {
  return new SecretsManagerClient(clientConfig(options));
}
