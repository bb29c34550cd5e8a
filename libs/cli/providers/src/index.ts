export type {
  CliProvider,
  CliProviderFactory,
  ClusterLifecycle,
  ProviderShell,
  SetupRequest,
} from './cli-provider';
export { BUILTIN_PROVIDERS } from './registry';
