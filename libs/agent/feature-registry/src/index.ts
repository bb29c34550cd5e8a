/** The process definition, and an in-process start of the HTTP application. */
export {
  configureRegistryHttp,
  registryProcess,
  startRegistry,
  type RunningRegistry,
  type StartRegistryOptions,
} from './bootstrap';
/** The Nest module and its ports. */
export { RegistryModule, type RegistryModuleOptions } from './registry.module';
/** The bucket port the registry reads through, and its logger port. */
export * from './registry.ports';
/** Bucket adapters: local directory and S3. */
export { LocalDirectoryRegistryStore } from './adapters/local-directory.store';
/** S3 adapter of the bucket port. */
export { S3RegistryStore } from './adapters/s3.store';
/** Chooses the adapter for a configuration. */
export { createRegistryStore } from './adapters/create-store';
/** JSON-lines logger for agent processes. */
export { JsonLogger, type JsonLoggerOptions } from '@podmin/agent-util-logging';
