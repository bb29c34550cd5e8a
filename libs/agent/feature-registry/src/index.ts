/** The process definition, and an in-process start of the HTTP application. */
export {
  configureRegistryHttp,
  registryProcess,
  startRegistry,
  type RunningRegistry,
  type StartRegistryOptions,
} from './registry.process';
/** The Nest module and its ports. */
export { RegistryModule, type RegistryModuleOptions } from './registry.module';
export {
  DEFAULT_TRANSFER_LIMITS,
  TransferBudget,
  type TransferLease,
  type TransferLimits,
} from './transfer-budget';
/** The bucket port the registry reads through (part of the shared ObjectStore), and its logger port. */
export * from './registry.ports';
/** JSON-lines logger for agent processes. */
export { JsonLogger, type JsonLoggerOptions } from '@podmin/agent-util-logging';
