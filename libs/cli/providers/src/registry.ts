import { awsProvider } from './aws.provider';
import type { CliProviderFactory } from './cli-provider';
import { localProvider } from './local.provider';

/**
 * The CLI's providers by name: the one place a context's `provider` becomes an
 * implementation. A new provider (e.g. Google Cloud) is one more entry here.
 */
export const BUILTIN_PROVIDERS: Readonly<Record<string, CliProviderFactory>> = Object.freeze({
  aws: awsProvider,
  local: localProvider,
});
