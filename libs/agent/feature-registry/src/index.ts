/** Process entry points: validate flags, start the Nest app on loopback. */
export {
  runRegistry,
  startRegistry,
  type RunningRegistry,
  type StartRegistryOptions,
} from './bootstrap';
/** Configuration from the agent-style flags. */
export { parseRegistryConfig, DEFAULT_LISTEN, type RegistryConfig } from './registry.config';
/** The Nest module and its ports. */
export { RegistryModule, type RegistryModuleOptions } from './registry.module';
/** The bucket port the registry reads through (part of the shared ObjectStore), and its logger port. */
export * from './registry.ports';
/** Opens the shared bucket store for a configuration. */
export { createRegistryStore } from './adapters/create-store';
/** JSON-lines logger for agent processes. */
export { JsonLogger, type JsonLoggerOptions } from '@podmin/agent-util-logging';
