/** The registry moved to util-names so the agent chooses its provider the same way. */
export { ProviderRegistry } from '@podmin/util-names';
