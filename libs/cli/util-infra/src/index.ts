/** Validation of `setup`'s flags. */
export {
  parseSetupFlags,
  DEFAULT_NAT64_INSTANCE_TYPE,
  type SetupFlags,
  type SetupRequest,
} from './setup-flags';
/** `--nodegroup NAME[,key=value…]`: defaults, bounds, instance types and zones. */
export {
  resolveZoneName,
  isInstanceTypeName,
  NODEGROUP_DEFAULTS,
  DISK_SIZE_RANGE,
  SIZE_RANGE,
  type NodeGroupRequest,
} from './nodegroup-flag';
/** `--vpc-cidr`: a private IPv4 network AWS accepts. */
export { vpcCidrProblems, VPC_PREFIX_RANGE } from './vpc-cidr';
/** `--workload-ca-publish s3://BUCKET/KEY`: one exact S3 object. */
export { parseWorkloadCaPublish, type WorkloadCaPublish } from './s3-object-flag';
/** `--otel-logs endpoint=URL[,…]`: container log export. */
export {
  parseOtelLogs,
  OTEL_LOGS_KEYS,
  OTEL_LOGS_PROTOCOLS,
  type OtelLogsConfig,
  type OtelLogsProtocol,
} from './otel-logs-flag';
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
