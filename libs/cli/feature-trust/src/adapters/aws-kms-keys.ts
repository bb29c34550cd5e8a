import {
  DescribeKeyCommand,
  GetPublicKeyCommand,
  KMSClient,
  SignCommand,
} from '@aws-sdk/client-kms';
import type { CliEnvironment, ClusterContext } from '@podmin/cli-util-config';
import {
  awsErrorDetails,
  awsClientConfig,
  describeAwsError,
  translateCommonAwsError,
  type AwsClientOptions,
} from '@podmin/util-aws';
import { PodminError, type PodminErrorCode } from '@podmin/util-errors';
import type { KmsKeyFacts, KmsKeys } from '../trust.ports';

const SERVICE = 'AWS KMS';

/**
 * Translates a KMS SDK error once, here: NotFoundException → NOT_FOUND; a disabled or
 * pending-deletion key → PRECONDITION_FAILED; a key that cannot sign → INVALID_ARGUMENT; the
 * rest as every AWS JSON service's adapter does (refused credentials → ACCESS_DENIED, no answer
 * or a server error → IO_ERROR).
 */
export function translateKmsError(err: unknown, doing: string): PodminError {
  if (err instanceof PodminError) return err;
  const { name, status, message } = awsErrorDetails(err);
  const detail = describeAwsError({ name, status });
  const fail = (code: PodminErrorCode, why: string, hint?: string): PodminError =>
    new PodminError(code, `${doing}: ${why}`, {
      cause: err,
      ...(hint === undefined ? {} : { hint }),
    });
  if (name === 'NotFoundException') {
    return fail(
      'NOT_FOUND',
      `no such key in ${SERVICE} (${detail})`,
      'check the key ARN, its region and the AWS account of the credentials',
    );
  }
  if (name === 'DisabledException' || name === 'KMSInvalidStateException') {
    return fail(
      'PRECONDITION_FAILED',
      `the key cannot be used now: ${message} (${detail})`,
      'enable the key (or cancel its deletion) in AWS KMS',
    );
  }
  if (
    name === 'InvalidKeyUsageException' ||
    name === 'UnsupportedOperationException' ||
    name === 'ValidationException' ||
    name === 'InvalidArnException'
  ) {
    return fail('INVALID_ARGUMENT', `${SERVICE} refused the key: ${message} (${detail})`);
  }
  return translateCommonAwsError(err, doing, SERVICE, {
    accessDenied:
      'check the AWS credentials and that their policy allows kms:DescribeKey, kms:GetPublicKey and kms:Sign on this key',
    unreachable: 'check the network (and AWS_ENDPOINT_URL_KMS if set) and try again',
  });
}

/** Creates a KMS client (the shared AWS client configuration; default credential chain). */
export function createKmsClient(options: AwsClientOptions): KMSClient {
  return new KMSClient(awsClientConfig(options));
}

/**
 * The KMS clients of a context, one per region a key ARN names (a key lives in its ARN's
 * region, whatever the context's): the context's profile, and AWS_ENDPOINT_URL_KMS (else
 * AWS_ENDPOINT_URL) from the environment, as the CLI's SSM and S3 clients are built.
 */
export function kmsClientsFor(
  context: Pick<ClusterContext, 'profile'>,
  env: Pick<CliEnvironment, 'kmsEndpoint'>,
): (region: string) => KMSClient {
  return (region) =>
    createKmsClient({
      region,
      ...(context.profile === undefined ? {} : { profile: context.profile }),
      ...(env.kmsEndpoint === undefined ? {} : { endpoint: env.kmsEndpoint }),
    });
}

/** The region of a KMS key ARN (`arn:<partition>:kms:<region>:…`). */
export function regionOfKmsArn(arn: string): string {
  const region = arn.split(':')[3];
  if (region === undefined || region === '') {
    throw new PodminError('INVALID_ARGUMENT', `using KMS key ${arn}: the ARN names no region`);
  }
  return region;
}

/** The {@link KmsKeys} port over the AWS SDK's KMS client, one client per region. */
export class AwsKmsKeys implements KmsKeys {
  private readonly clients = new Map<string, Pick<KMSClient, 'send'>>();

  constructor(private readonly clientFor: (region: string) => Pick<KMSClient, 'send'>) {}

  private client(arn: string): Pick<KMSClient, 'send'> {
    const region = regionOfKmsArn(arn);
    let client = this.clients.get(region);
    if (client === undefined) {
      client = this.clientFor(region);
      this.clients.set(region, client);
    }
    return client;
  }

  async describe(arn: string): Promise<KmsKeyFacts> {
    const out = await this.call(`describing KMS key ${arn}`, () =>
      this.client(arn).send(new DescribeKeyCommand({ KeyId: arn })),
    );
    const meta = out.KeyMetadata;
    return {
      arn: meta?.Arn ?? arn,
      keySpec: meta?.KeySpec ?? meta?.CustomerMasterKeySpec,
      keyUsage: meta?.KeyUsage,
      signingAlgorithms: meta?.SigningAlgorithms ?? [],
      enabled: meta?.Enabled === true && (meta.KeyState ?? 'Enabled') === 'Enabled',
    };
  }

  async publicKey(arn: string): Promise<Buffer> {
    const doing = `reading the public key of KMS key ${arn}`;
    const out = await this.call(doing, () =>
      this.client(arn).send(new GetPublicKeyCommand({ KeyId: arn })),
    );
    if (out.PublicKey === undefined || out.PublicKey.length === 0) {
      throw new PodminError('IO_ERROR', `${doing}: ${SERVICE} answered without a public key`);
    }
    return Buffer.from(out.PublicKey);
  }

  async sign(arn: string, message: Buffer): Promise<Buffer> {
    const doing = `signing the desired-state index with KMS key ${arn}`;
    const out = await this.call(doing, () =>
      this.client(arn).send(
        new SignCommand({
          KeyId: arn,
          Message: message,
          MessageType: 'RAW',
          SigningAlgorithm: 'ECDSA_SHA_256',
        }),
      ),
    );
    if (out.Signature === undefined || out.Signature.length === 0) {
      throw new PodminError('IO_ERROR', `${doing}: ${SERVICE} answered without a signature`);
    }
    return Buffer.from(out.Signature);
  }

  private async call<T>(doing: string, send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } catch (err) {
      throw translateKmsError(err, doing);
    }
  }
}
