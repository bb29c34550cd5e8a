/** Choosing and running OpenTofu/Terraform, and the work directory it runs in. */
export {
  findEngine,
  backendArgs,
  writeWorkDir,
  InfraEngine,
  StateLockedError,
  KEPT_WORK_DIR_ENTRIES,
  type EngineSearch,
  type BackendConfig,
  type InfraEngineOptions,
} from './engine';
