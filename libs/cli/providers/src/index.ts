export type {
  CliProvider,
  CliProviderFactory,
  ClusterLifecycle,
  ContainerLogAccess,
  LogNode,
  ProviderShell,
  SetupRequest,
} from './cli-provider';
export { BUILTIN_PROVIDERS } from './registry';
