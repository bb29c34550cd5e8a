import { isUtf8 } from 'node:buffer';
import {
  CreateSecretCommand,
  DeleteSecretCommand,
  DescribeSecretCommand,
  GetSecretValueCommand,
  ListSecretsCommand,
  PutSecretValueCommand,
  RestoreSecretCommand,
  type SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { PodminError, hasCode } from '@podmin/util-errors';
import { awsErrorDetails, translateCommonAwsError } from '@podmin/util-aws';
import { secretExistsError, secretNotFoundError } from './secret-errors';
import { collectNamePages } from './aws-pages';
import {
  assertRecoverySupported,
  assertValueAllowed,
  scheduledForDeletionError,
} from './provider-rules';
import { assertSecretPrefix, parseSecretName } from './secret-names';
import type { AwsSecretStoreOptions, CreateSecretOptions, SecretStore } from './secret-store.port';

const SERVICE = 'AWS Secrets Manager';

/**
 * Translates a Secrets Manager (AWS SDK v3) error once, here: ResourceNotFoundException →
 * NOT_FOUND, ResourceExistsException → ALREADY_EXISTS, InvalidRequestException about a deleted
 * secret → PRECONDITION_FAILED (scheduled for deletion), AccessDeniedException → ACCESS_DENIED,
 * the rest by `translateCommonAwsError`. The original error is the cause.
 */
export function translateSecretsManagerError(
  err: unknown,
  doing: string,
  name: string,
): PodminError {
  if (err instanceof PodminError) return err;
  const { name: errorName, message } = awsErrorDetails(err);
  switch (errorName) {
    case 'ResourceNotFoundException':
      return secretNotFoundError(doing, 'secret', err);
    case 'ResourceExistsException':
      return secretExistsError(doing, 'secret', err);
    case 'InvalidRequestException':
      // The one InvalidRequestException callers can act on is a pending deletion.
      if (/delet/i.test(message)) return scheduledForDeletionError(doing, name, { cause: err });
      return new PodminError(
        'INVALID_ARGUMENT',
        `${doing}: ${SERVICE} rejected the request: ${message}`,
        {
          cause: err,
        },
      );
    default:
      return translateCommonAwsError(err, doing, SERVICE);
  }
}

/** The aws-secrets-manager SecretStore: text or binary values, 30-day recovery window. */
export class SecretsManagerSecretStore implements SecretStore {
  readonly provider = 'aws-secrets-manager' as const;

  private readonly pageSize: number;

  constructor(
    private readonly client: Pick<SecretsManagerClient, 'send'>,
    options: AwsSecretStoreOptions = {},
  ) {
    this.pageSize = options.pageSize ?? 100;
  }

  async create(name: string, value: Buffer, options: CreateSecretOptions = {}): Promise<void> {
    parseSecretName(name);
    assertValueAllowed(this.provider, name, value);
    const doing = `creating ${name} in ${this.provider}`;
    try {
      await this.client.send(
        new CreateSecretCommand({
          Name: name,
          ...secretValue(value),
          ...(options.description === undefined ? {} : { Description: options.description }),
          ...(options.kmsKeyId === undefined ? {} : { KmsKeyId: options.kmsKeyId }),
        }),
      );
    } catch (err) {
      const translated = translateSecretsManagerError(err, doing, name);
      // A name held by a deleted secret is "scheduled for deletion", not "exists".
      if (translated.code === 'ALREADY_EXISTS') {
        const deletionDate = await this.deletionDate(doing, name).catch(() => undefined);
        if (deletionDate !== undefined)
          throw scheduledForDeletionError(doing, name, { deletionDate });
      }
      throw translated;
    }
  }

  async update(name: string, value: Buffer): Promise<void> {
    parseSecretName(name);
    assertValueAllowed(this.provider, name, value);
    const doing = `updating ${name} in ${this.provider}`;
    // Checked first so a deleted secret fails the same way on every Secrets Manager API.
    const deletionDate = await this.deletionDate(doing, name);
    if (deletionDate !== undefined) throw scheduledForDeletionError(doing, name, { deletionDate });
    await this.call(doing, name, () =>
      this.client.send(new PutSecretValueCommand({ SecretId: name, ...secretValue(value) })),
    );
  }

  async get(name: string): Promise<Buffer> {
    parseSecretName(name);
    const doing = `reading ${name} from ${this.provider}`;
    const out = await this.call(doing, name, () =>
      this.client.send(new GetSecretValueCommand({ SecretId: name })),
    );
    if (out.SecretString !== undefined) return Buffer.from(out.SecretString, 'utf8');
    if (out.SecretBinary !== undefined) return Buffer.from(out.SecretBinary);
    throw new PodminError(
      'IO_ERROR',
      `${doing}: the answer has neither SecretString nor SecretBinary`,
    );
  }

  async exists(name: string): Promise<boolean> {
    parseSecretName(name);
    const doing = `checking ${name} in ${this.provider}`;
    let deletionDate: Date | undefined;
    try {
      // DescribeSecret answers metadata only; GetSecretValue is never called.
      deletionDate = await this.deletionDate(doing, name);
    } catch (err) {
      if (hasCode(err, 'NOT_FOUND')) return false;
      throw err;
    }
    if (deletionDate !== undefined) throw scheduledForDeletionError(doing, name, { deletionDate });
    return true;
  }

  async list(prefix: string): Promise<string[]> {
    assertSecretPrefix(prefix);
    return collectNamePages(async (token) => {
      const page = await this.call(`listing ${prefix} in ${this.provider}`, prefix, () =>
        this.client.send(
          new ListSecretsCommand({
            // The name filter is a case-insensitive prefix match; the exact check follows.
            Filters: [{ Key: 'name', Values: [prefix] }],
            IncludePlannedDeletion: false,
            MaxResults: this.pageSize,
            ...(token === undefined ? {} : { NextToken: token }),
          }),
        ),
      );
      const names = (page.SecretList ?? []).flatMap((s) =>
        s.Name?.startsWith(prefix) && s.DeletedDate === undefined ? [s.Name] : [],
      );
      return { names, nextToken: page.NextToken };
    });
  }

  async delete(name: string): Promise<void> {
    parseSecretName(name);
    const days = assertRecoverySupported(this.provider, 'delete', name);
    await this.call(`deleting ${name} in ${this.provider}`, name, () =>
      this.client.send(new DeleteSecretCommand({ SecretId: name, RecoveryWindowInDays: days })),
    );
  }

  async restore(name: string): Promise<void> {
    parseSecretName(name);
    assertRecoverySupported(this.provider, 'restore', name);
    await this.call(`restoring ${name} in ${this.provider}`, name, () =>
      this.client.send(new RestoreSecretCommand({ SecretId: name })),
    );
  }

  async destroy(name: string): Promise<void> {
    parseSecretName(name);
    const doing = `destroying ${name} in ${this.provider}`;
    // A forced delete of a missing secret succeeds silently on AWS; report NOT_FOUND instead.
    await this.deletionDate(doing, name);
    await this.call(doing, name, () =>
      this.client.send(
        new DeleteSecretCommand({ SecretId: name, ForceDeleteWithoutRecovery: true }),
      ),
    );
  }

  /** The scheduled deletion date, undefined for a live secret; NOT_FOUND when absent. */
  private async deletionDate(doing: string, name: string): Promise<Date | undefined> {
    const out = await this.call(doing, name, () =>
      this.client.send(new DescribeSecretCommand({ SecretId: name })),
    );
    return out.DeletedDate;
  }

  private async call<T>(doing: string, name: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw translateSecretsManagerError(err, doing, name);
    }
  }
}

/** Text values travel as SecretString, anything else as SecretBinary. */
function secretValue(value: Buffer): { SecretString: string } | { SecretBinary: Uint8Array } {
  return isUtf8(value)
    ? { SecretString: value.toString('utf8') }
    : { SecretBinary: new Uint8Array(value) };
}
