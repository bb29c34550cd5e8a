import fs from 'node:fs/promises';
import path from 'node:path';
import { PodminError, ValidationError, type FieldProblem } from '@podmin/util-errors';
import {
  SECRETS_PROVIDERS,
  type ClusterContext,
  type ProviderRegistry,
  type SecretsProvider,
} from '@podmin/cli-util-config';
import { renderTable } from '@podmin/cli-util-io';
import { isDnsLabel } from '@podmin/util-names';
import type { BucketPreparer, ConnectRules, ContextDeps } from './context.ports';

/** Where a cluster's bucket lives. */
export type BucketLocation = Pick<ClusterContext, 'provider' | 'region' | 'bucket' | 'profile'>;

/** Inputs of `podmin connect`. */
export interface ConnectOptions {
  cluster: string;
  provider: string;
  region?: string;
  bucket?: string;
  profile?: string;
  secretsProvider?: string;
  /** Region from the environment (AWS_REGION), used when --region is absent. */
  defaultRegion?: string;
}

/**
 * Validates `connect` input and resolves defaults into a context; lists every bad flag, the
 * provider's own (region, bucket, profile) from its rules in `providers`.
 */
export function resolveConnect(
  options: ConnectOptions,
  dataDir: string,
  providers: Pick<ProviderRegistry<ConnectRules>, 'names' | 'has' | 'get'>,
): ClusterContext {
  const problems: FieldProblem[] = [];
  const { cluster } = options;
  if (!isDnsLabel(cluster, 40)) {
    problems.push({
      field: '<cluster>',
      message: `${JSON.stringify(cluster)} must be a DNS-1123 label of at most 40 characters (lowercase letters, digits, "-")`,
    });
  }
  if (cluster === '_system') problems.push({ field: '<cluster>', message: '_system is reserved' });
  const known = providers.has(options.provider);
  if (!known) {
    problems.push({ field: '--provider', message: `must be one of ${providers.names.join(', ')}` });
  }
  const secretsProvider = options.secretsProvider ?? 'aws-parameter-store';
  if (!(SECRETS_PROVIDERS as readonly string[]).includes(secretsProvider)) {
    problems.push({
      field: '--secrets-provider',
      message: `must be one of ${SECRETS_PROVIDERS.join(', ')}`,
    });
  }
  const location = known
    ? providers.get(options.provider).resolveLocation(options, dataDir, problems)
    : undefined;
  if (problems.length > 0 || location === undefined)
    throw new ValidationError('connect', problems, { code: 'INVALID_ARGUMENT' });
  const ctx: ClusterContext = {
    cluster,
    provider: options.provider,
    region: location.region,
    bucket: location.bucket,
    secretsProvider: secretsProvider as SecretsProvider,
  };
  if (options.profile) ctx.profile = options.profile;
  return ctx;
}

/**
 * `podmin connect`: prepares the bucket, then saves and selects the context. The config is
 * read first, so a config it cannot update fails the command before anything is created; a
 * bucket it created is removed again when a later step fails.
 */
export async function connect(options: ConnectOptions, deps: ContextDeps): Promise<ClusterContext> {
  const ctx = resolveConnect(options, deps.dirs.data, deps.providers);
  await deps.contexts.read();
  const provider = deps.providers.get(ctx.provider);
  const where = provider.describeBucket(ctx);
  deps.reporter.info(`Checking bucket ${where}`);
  const bucket = await provider.openBucket(ctx);
  const { created } = await bucket.ensureBucket();
  deps.reporter.info(created ? `Created bucket ${where}` : `Using existing bucket ${where}`);
  try {
    await bucket.probeAccess();
    deps.reporter.info('Verified read, write and delete access');
    await deps.contexts.update(
      (config) => ({
        current: ctx.cluster,
        contexts: { ...config.contexts, [ctx.cluster]: ctx },
      }),
      'podmin connect',
    );
  } catch (err) {
    if (created) await removeCreatedBucket(bucket, where, deps);
    throw err;
  }
  deps.reporter.info(`Connected to cluster ${ctx.cluster}; it is now the current context`);
  return ctx;
}

/** Undoes the bucket creation of a failed connect; a failure to do so is reported, not thrown. */
async function removeCreatedBucket(
  bucket: BucketPreparer,
  where: string,
  deps: Pick<ContextDeps, 'reporter'>,
): Promise<void> {
  try {
    await bucket.deleteBucket();
    deps.reporter.info(`Removed bucket ${where} again, since connect failed`);
  } catch (cleanupErr) {
    deps.reporter.warn(
      `connect created bucket ${where} but could not remove it after failing: ${cleanupErr instanceof Error ? cleanupErr.message : String(cleanupErr)}`,
    );
  }
}

/** `podmin use <cluster>`: selects a saved context. */
export async function useContext(
  cluster: string,
  deps: Pick<ContextDeps, 'contexts' | 'reporter'>,
): Promise<void> {
  await deps.contexts.update((config) => {
    if (!config.contexts[cluster]) {
      throw new PodminError('CONTEXT_NOT_FOUND', `selecting ${cluster}: no such context`, {
        hint: `known contexts: ${Object.keys(config.contexts).join(', ') || 'none'}; run \`podmin connect ${cluster} --provider …\` to add it`,
      });
    }
    return { ...config, current: cluster };
  }, 'podmin use');
  deps.reporter.info(`Switched to cluster ${cluster}`);
}

/** One saved context as `podmin use` lists it. */
export interface ContextRow {
  cluster: string;
  provider: string;
  region: string;
  /** S3 bucket name (aws) or absolute bucket directory (local). */
  bucket: string;
  /** The AWS profile; null when none is set. */
  profile: string | null;
  secretsProvider: string;
  /** Whether it is the saved current context. */
  current: boolean;
}

/** `podmin use` without a cluster: every saved context, in the config file's order. */
export async function listContexts(deps: Pick<ContextDeps, 'contexts'>): Promise<ContextRow[]> {
  const config = await deps.contexts.read();
  return Object.values(config.contexts).map((c) => ({
    cluster: c.cluster,
    provider: c.provider,
    region: c.region,
    bucket: c.bucket,
    profile: c.profile ?? null,
    secretsProvider: c.secretsProvider,
    current: c.cluster === config.current,
  }));
}

/** The contexts as a table, the current one marked with *. */
export function contextTable(rows: readonly ContextRow[]): string {
  return renderTable(
    ['CURRENT', 'CLUSTER', 'PROVIDER', 'REGION', 'BUCKET', 'SECRETS'],
    rows.map((c) => [
      c.current ? '*' : '',
      c.cluster,
      c.provider,
      c.region,
      c.bucket,
      c.secretsProvider,
    ]),
  );
}

/** `podmin use` without a cluster: the contexts as a table (current marked with *). */
export async function renderContexts(deps: Pick<ContextDeps, 'contexts'>): Promise<string> {
  return contextTable(await listContexts(deps));
}

/** `podmin disconnect <cluster>`: forgets the context locally; the bucket is untouched. */
export async function disconnect(
  cluster: string,
  deps: Pick<ContextDeps, 'contexts' | 'reporter' | 'dirs'>,
): Promise<void> {
  await deps.contexts.update((config) => {
    if (!config.contexts[cluster]) {
      throw new PodminError('CONTEXT_NOT_FOUND', `disconnecting ${cluster}: no such context`, {
        hint: 'run `podmin use` to list contexts',
      });
    }
    const contexts = { ...config.contexts };
    delete contexts[cluster];
    return config.current === cluster ? { contexts } : { current: config.current, contexts };
  }, 'podmin disconnect');
  // Generated infrastructure files are local state of this context too.
  await fs.rm(path.join(deps.dirs.cache, 'infrastructure', cluster), {
    recursive: true,
    force: true,
  });
  deps.reporter.info(
    `Disconnected from ${cluster}; its bucket and cloud resources were left as they are`,
  );
}
