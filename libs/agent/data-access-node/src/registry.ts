import { ProviderRegistry } from '@podmin/util-names';
import type { AgentProcessConfig } from '@podmin/agent-util-config';
import type { AgentProvider } from './agent-provider';
import { awsAgentProvider } from './aws.provider';
import { localAgentProvider } from './local.provider';

/**
 * The agent's providers by name: the one place `--provider` becomes an implementation, for the
 * parse (pass it to `parseAgentInvocation`) and for every opener. A new provider (e.g. Google
 * Cloud) is one more entry here.
 */
export const AGENT_PROVIDERS: ProviderRegistry<AgentProvider> = new ProviderRegistry({
  aws: awsAgentProvider,
  local: localAgentProvider,
});

/** Agent providers by name (the built-in registry, or a test's with a provider of its own). */
export type AgentProviders = Pick<ProviderRegistry<AgentProvider>, 'names' | 'has' | 'get'>;

/** The provider of a parsed config; INVALID_ARGUMENT naming the known providers otherwise. */
export function agentProviderOf(
  config: Pick<AgentProcessConfig, 'provider'>,
  providers: AgentProviders = AGENT_PROVIDERS,
): AgentProvider {
  return providers.get(config.provider, 'opening the node provider');
}
