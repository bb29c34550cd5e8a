import type { Argv } from 'yargs';
import type { SecretsDeps, SecretValueInput } from '@podmin/cli-feature-secrets';
import type { CliContext } from '../../cli-context';

/** Flags that address one secret, shared by every `podmin secret` subcommand but list. */
export interface SecretAddressArgs {
  key: string;
  for?: string;
  namespace?: string;
  system?: boolean;
  provider?: string;
}

/** Flags of the value source of create and update. */
export interface SecretValueArgs {
  'from-file'?: string;
  'from-stdin'?: boolean;
}

/** Provider names `--provider` accepts. */
export const PROVIDER_CHOICES = ['aws-parameter-store', 'aws-secrets-manager'];

/** Adds the `<key>`, `--for`, `-n`, `--system` and `--provider` flags. */
export function withSecretAddress<T>(y: Argv<T>) {
  return y
    .positional('key', {
      type: 'string',
      demandOption: true,
      describe: 'Secret key: one path component, [A-Za-z0-9][A-Za-z0-9._-]*',
    })
    .option('for', {
      type: 'string',
      describe: 'The Pod the secret is for (required unless --system)',
    })
    .option('namespace', {
      alias: 'n',
      type: 'string',
      describe: 'Namespace of the Pod (default "default")',
    })
    .option('system', {
      type: 'boolean',
      describe: 'Address /<cluster>/_system/<key> (only otel-logs-headers)',
    })
    .option('provider', {
      type: 'string',
      choices: PROVIDER_CHOICES,
      describe: "Secrets provider (default: the context's secrets provider)",
    });
}

/** Flags of create and update: the secret's address and where its value comes from. */
export type SecretWriteArgs = SecretAddressArgs & SecretValueArgs;

/** Adds the address flags ({@link withSecretAddress}), then `--from-file` and `--from-stdin`. */
export function withSecretWrite<T>(y: Argv<T>) {
  return withSecretValue(withSecretAddress(y));
}

function withSecretValue<T>(y: Argv<T>) {
  return y
    .option('from-file', {
      type: 'string',
      describe: 'Read the value from this file (bytes kept exactly)',
    })
    .option('from-stdin', {
      type: 'boolean',
      describe: 'Read the value from stdin (bytes kept exactly)',
    })
    .conflicts('from-file', 'from-stdin');
}

/** The address flags in the feature library's shape. */
export function toAddress(args: SecretAddressArgs) {
  return {
    key: args.key,
    ...(args.for === undefined ? {} : { pod: args.for }),
    ...(args.namespace === undefined ? {} : { namespace: args.namespace }),
    ...(args.system === undefined ? {} : { system: args.system }),
    ...(args.provider === undefined ? {} : { provider: args.provider }),
  };
}

/** The address and value-source flags of create and update in the feature library's shape. */
export function toWriteRequest(args: SecretWriteArgs) {
  return {
    ...toAddress(args),
    ...(args['from-file'] === undefined ? {} : { fromFile: args['from-file'] }),
    ...(args['from-stdin'] === undefined ? {} : { fromStdin: args['from-stdin'] }),
  };
}

/**
 * Loads the feature library and builds its dependencies for the current context (NO_CONTEXT
 * when none is selected). `input` replaces the terminal in tests.
 */
export async function loadSecrets(ctx: CliContext, input?: SecretValueInput) {
  const context = await ctx.currentContext();
  const lib = await import('@podmin/cli-feature-secrets');
  const deps: SecretsDeps = {
    reporter: ctx.reporter,
    context,
    openStore: ctx.secretStores(context),
    input: input ?? new lib.TerminalSecretInput({ stdin: process.stdin, stderr: process.stderr }),
  };
  return { lib, deps };
}
