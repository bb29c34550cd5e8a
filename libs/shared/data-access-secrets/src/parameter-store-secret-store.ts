import {
  DeleteParameterCommand,
  DescribeParametersCommand,
  GetParameterCommand,
  PutParameterCommand,
  type SSMClient,
} from '@aws-sdk/client-ssm';
import { PodminError } from '@podmin/util-errors';
import { awsErrorDetails, translateCommonAwsError } from '@podmin/util-aws';
import { secretExistsError, secretNotFoundError } from './secret-errors';
import { collectNamePages } from './aws-pages';
import { assertRecoverySupported, assertValueAllowed } from './provider-rules';
import { assertSecretPrefix, parseSecretName } from './secret-names';
import type { AwsSecretStoreOptions, CreateSecretOptions, SecretStore } from './secret-store.port';

const SERVICE = 'AWS Systems Manager Parameter Store';

/**
 * Translates an SSM (AWS SDK v3) error once, here: ParameterNotFound → NOT_FOUND,
 * ParameterAlreadyExists → ALREADY_EXISTS, AccessDenied → ACCESS_DENIED, the rest by
 * `translateCommonAwsError`. The original error is the cause.
 */
export function translateSsmError(err: unknown, doing: string): PodminError {
  if (err instanceof PodminError) return err;
  const { name } = awsErrorDetails(err);
  switch (name) {
    case 'ParameterNotFound':
      return secretNotFoundError(doing, 'parameter', err);
    case 'ParameterAlreadyExists':
      return secretExistsError(doing, 'parameter', err);
    case 'ParameterLimitExceeded':
      return new PodminError('IO_ERROR', `${doing}: the account's parameter limit is reached`, {
        cause: err,
      });
    default:
      return translateCommonAwsError(err, doing, SERVICE);
  }
}

/** The aws-parameter-store SecretStore: SecureString writes, decrypted reads, no recovery window. */
export class ParameterStoreSecretStore implements SecretStore {
  readonly provider = 'aws-parameter-store' as const;

  private readonly pageSize: number;

  constructor(
    private readonly client: Pick<SSMClient, 'send'>,
    options: AwsSecretStoreOptions = {},
  ) {
    this.pageSize = options.pageSize ?? 50;
  }

  async create(name: string, value: Buffer, options: CreateSecretOptions = {}): Promise<void> {
    parseSecretName(name);
    assertValueAllowed(this.provider, name, value);
    await this.call(`creating ${name} in ${this.provider}`, () =>
      this.client.send(
        new PutParameterCommand({
          Name: name,
          Value: value.toString('utf8'),
          Type: 'SecureString',
          Overwrite: false,
          ...(options.description === undefined ? {} : { Description: options.description }),
          ...(options.kmsKeyId === undefined ? {} : { KeyId: options.kmsKeyId }),
        }),
      ),
    );
  }

  async update(name: string, value: Buffer): Promise<void> {
    parseSecretName(name);
    assertValueAllowed(this.provider, name, value);
    const doing = `updating ${name} in ${this.provider}`;
    // PutParameter with Overwrite would also create; update must only replace.
    await this.call(doing, () =>
      this.client.send(new GetParameterCommand({ Name: name, WithDecryption: false })),
    );
    await this.call(doing, () =>
      this.client.send(
        new PutParameterCommand({
          Name: name,
          Value: value.toString('utf8'),
          Type: 'SecureString',
          Overwrite: true,
        }),
      ),
    );
  }

  async get(name: string): Promise<Buffer> {
    parseSecretName(name);
    const doing = `reading ${name} from ${this.provider}`;
    const out = await this.call(doing, () =>
      this.client.send(new GetParameterCommand({ Name: name, WithDecryption: true })),
    );
    const parameter = out.Parameter;
    if (
      parameter?.Value === undefined ||
      !['String', 'StringList', 'SecureString'].includes(parameter.Type ?? '')
    ) {
      throw new PodminError(
        'IO_ERROR',
        `${doing}: the answer has no value of type String, StringList or SecureString`,
      );
    }
    return Buffer.from(parameter.Value, 'utf8');
  }

  async exists(name: string): Promise<boolean> {
    parseSecretName(name);
    // DescribeParameters returns metadata only, so the check needs no decryption and no value.
    const out = await this.call(`checking ${name} in ${this.provider}`, () =>
      this.client.send(
        new DescribeParametersCommand({
          ParameterFilters: [{ Key: 'Name', Option: 'Equals', Values: [name] }],
        }),
      ),
    );
    return (out.Parameters ?? []).some((p) => p.Name === name);
  }

  async list(prefix: string): Promise<string[]> {
    assertSecretPrefix(prefix);
    const path = prefix === '/' ? '/' : prefix.slice(0, -1);
    return collectNamePages(async (token) => {
      const page = await this.call(`listing ${prefix} in ${this.provider}`, () =>
        this.client.send(
          new DescribeParametersCommand({
            ParameterFilters: [{ Key: 'Path', Option: 'Recursive', Values: [path] }],
            MaxResults: this.pageSize,
            ...(token === undefined ? {} : { NextToken: token }),
          }),
        ),
      );
      const names = (page.Parameters ?? []).flatMap((p) =>
        p.Name?.startsWith(prefix) ? [p.Name] : [],
      );
      return { names, nextToken: page.NextToken };
    });
  }

  delete(name: string): Promise<void> {
    // Always rejected: Parameter Store has no recovery window (the rule lives in provider-rules).
    return Promise.resolve().then(() => {
      parseSecretName(name);
      assertRecoverySupported(this.provider, 'delete', name);
    });
  }

  restore(name: string): Promise<void> {
    return Promise.resolve().then(() => {
      parseSecretName(name);
      assertRecoverySupported(this.provider, 'restore', name);
    });
  }

  async destroy(name: string): Promise<void> {
    parseSecretName(name);
    await this.call(`destroying ${name} in ${this.provider}`, () =>
      this.client.send(new DeleteParameterCommand({ Name: name })),
    );
  }

  private async call<T>(doing: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw translateSsmError(err, doing);
    }
  }
}
