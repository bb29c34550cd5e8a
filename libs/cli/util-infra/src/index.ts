/** Validation of `setup`'s flags. */
export {
  parseSetupFlags,
  parseWorkloadCaPublish,
  parseOtelLogs,
  OTEL_LOGS_KEYS,
  OTEL_LOGS_PROTOCOLS,
  vpcCidrProblems,
  resolveZoneName,
  isInstanceTypeName,
  NODEGROUP_DEFAULTS,
  DEFAULT_NAT64_INSTANCE_TYPE,
  DISK_SIZE_RANGE,
  SIZE_RANGE,
  VPC_PREFIX_RANGE,
  type SetupFlags,
  type SetupRequest,
  type NodeGroupRequest,
  type WorkloadCaPublish,
  type OtelLogsConfig,
  type OtelLogsProtocol,
} from './setup-flags';
/** The module inputs (`podmin.auto.tfvars.json`) and their bucket keys. */
export {
  serializeModuleVars,
  parseModuleVars,
  TFVARS_OBJECT_KEY,
  TFSTATE_OBJECT_KEY,
  TFVARS_FILE_NAME,
  MAX_TFVARS_BYTES,
  type ModuleVars,
  type NodeGroupVars,
  type Nat64Vars,
  type OtelLogsVars,
  otelLogsVars,
} from './module-vars';
/** Decisions on what the provider API reports: instance types, AMIs, the VPC. */
export {
  instanceTypeArch,
  ec2Architecture,
  latestDebianImage,
  debianImagePattern,
  decideVpc,
  DEBIAN_AMI_OWNER,
  CLUSTER_TAG,
  type InstanceTypeFacts,
  type ImageFacts,
  type VpcFacts,
  type VpcDecision,
} from './provider-checks';
/** Reading OpenTofu/Terraform output: the version and a state lock's ID. */
export { parseEngineVersion, stateLockId, MIN_ENGINE_VERSION } from './engine-output';
/** Module files: the embedded AWS module and reading a module directory. */
export { readModuleDir, isModuleFileName, type ModuleFile } from './module-files';
export { embeddedAwsModule } from './aws-module';
