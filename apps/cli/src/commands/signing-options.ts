import os from 'node:os';
import type { Argv } from 'yargs';
import type { IndexSigning } from '@podmin/data-access-desired-state';
import type { ClusterContext } from '@podmin/cli-util-config';
import type { SignerDeps, TrustDeps } from '@podmin/cli-feature-trust';
import type { CliContext } from '../cli-context';

/** The signer flags of every command that writes `deployments/index.json`. */
export interface SigningArgs {
  'signing-key'?: string;
  'kms-key'?: string;
  signer?: string;
}

/** One line for the epilogue of the commands that sign. */
export const SIGNING_EPILOGUE =
  'Signing: when the cluster has trusted deployers (`podmin trust list`), every index write must be signed by one: --signing-key FILE, --kms-key ARN --signer NAME, PODMIN_SIGNING_KEY / PODMIN_KMS_KEY / PODMIN_SIGNER, or by default the one key `podmin trust keygen` wrote under <config>/trust/<cluster>/. Without a signer the write is refused there before anything is written.';

/**
 * Adds `--signing-key FILE`, `--kms-key ARN` and `--signer NAME` to a command that writes the
 * desired-state index (deploy, delete, rollback, install, rollout restart, secret update
 * --restart, trust sign).
 */
export function withSigningFlags<T>(y: Argv<T>) {
  return y
    .option('signing-key', {
      type: 'string',
      requiresArg: true,
      describe:
        'Sign the index write with this local private key (`podmin trust keygen`); the deployer name is the file name without .key unless --signer (env: PODMIN_SIGNING_KEY). Default: the one key under <config>/trust/<cluster>/',
    })
    .option('kms-key', {
      type: 'string',
      requiresArg: true,
      describe:
        'Sign with this AWS KMS key ARN (ECC_NIST_P256, SIGN_VERIFY; one kms:Sign call, no private key here); needs --signer (env: PODMIN_KMS_KEY)',
    })
    .option('signer', {
      type: 'string',
      requiresArg: true,
      describe:
        'The trusted deployer name the signature carries, as `podmin trust add` recorded it; alone it picks <config>/trust/<cluster>/NAME.key (env: PODMIN_SIGNER)',
    })
    .conflicts('signing-key', 'kms-key');
}

/** The trust-list and key access of a context, for signer resolution and `podmin trust`. */
export function trustListDeps(ctx: CliContext, context: ClusterContext): SignerDeps {
  return {
    cluster: context.cluster,
    configDir: ctx.dirs.config,
    openStore: () => ctx.secretStores(context)('aws-parameter-store'),
    kms: async () => {
      const { AwsKmsKeys, kmsClientsFor } = await import('@podmin/cli-feature-trust');
      return new AwsKmsKeys(kmsClientsFor(context, ctx.env));
    },
  };
}

/** Everything the `podmin trust` operations need, for the invocation's context. */
export async function trustDeps(ctx: CliContext): Promise<TrustDeps> {
  const context = await ctx.currentContext();
  return {
    ...trustListDeps(ctx, context),
    reporter: ctx.reporter,
    interactive: process.stdin.isTTY === true,
    openBucket: () => ctx.openBucket(context),
  };
}

/** The local user name `podmin trust keygen` names a key after by default. */
export function localUserName(): string {
  try {
    return os.userInfo().username;
  } catch {
    return 'deployer';
  }
}

/**
 * The signing of this invocation's index writes (flags, then PODMIN_* variables, then the
 * default key), or undefined for an unsigned write, which is refused (one trust-list read,
 * before anything is written) while the cluster has trusted deployers. `doing` leads that
 * refusal.
 */
export async function resolveSigning(
  ctx: CliContext,
  context: ClusterContext,
  args: SigningArgs,
  doing: string,
): Promise<IndexSigning | undefined> {
  const { resolveIndexSigning } = await import('@podmin/cli-feature-trust');
  return resolveIndexSigning(
    {
      flags: {
        ...(args['signing-key'] === undefined ? {} : { signingKey: args['signing-key'] }),
        ...(args['kms-key'] === undefined ? {} : { kmsKey: args['kms-key'] }),
        ...(args.signer === undefined ? {} : { signer: args.signer }),
      },
      env: {
        ...(ctx.env.signingKey === undefined ? {} : { signingKey: ctx.env.signingKey }),
        ...(ctx.env.kmsKey === undefined ? {} : { kmsKey: ctx.env.kmsKey }),
        ...(ctx.env.signer === undefined ? {} : { signer: ctx.env.signer }),
      },
    },
    trustListDeps(ctx, context),
    doing,
  );
}

/**
 * Opens the invocation's bucket, then resolves the signing of the index write it is for (see
 * {@link resolveSigning}), in that order; `signed` is what the commit options take: `{ signing }`,
 * or `{}` for an unsigned write.
 */
export async function bucketWithSigning(
  ctx: CliContext,
  args: SigningArgs,
  doing: string,
): Promise<
  Awaited<ReturnType<CliContext['currentBucket']>> & { signed: { signing?: IndexSigning } }
> {
  const { context, store } = await ctx.currentBucket();
  const signing = await resolveSigning(ctx, context, args, doing);
  return { context, store, signed: signing === undefined ? {} : { signing } };
}
