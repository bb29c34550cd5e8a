/** Starts or finds the moto AWS-API emulator for integration tests. */
export { getAwsEmulator, type AwsEmulator } from './aws-emulator';
/** A fresh bucket in the emulator, created through the caller's S3 client factory. */
export { emulatorBucket, type EmulatorBucket } from './emulator-bucket';
/** Temporary directories with a cleanup function. */
export { makeTempDir, type TempDir } from './temp-dir';
/** Unique, valid S3 bucket names for tests. */
export { uniqueBucketName } from './bucket-name';
/** Commits test desired state through the desired-state library (payloads, then index CAS). */
export { commitDesiredState, type DesiredStateChange, type TestDeployment } from './desired-state';
/** In-memory ObjectStore fake for unit tests. */
export { InMemoryObjectStore } from './in-memory-object-store';
/** Loopback ports and bounded polling for tests that drive real processes. */
export { freeLoopbackPort, waitFor } from './wait';
/** The agent's six flags for the local provider, as a valid command line for agent specs. */
export { localAgentArgs, localAgentFlags } from './agent-flags';
/** The real OpenTofu/Terraform for infrastructure tests. */
export { findTestInfraEngine, type TestInfraEngine } from './infra-engine';
/** A loopback HTTP server shaped like the upstreams the dependency resolver reads. */
export {
  artifact,
  FakeUpstream,
  type FakeJoolBuild,
  type FakeRelease,
  type FakeUpstreamEndpoints,
} from './fake-upstream';
/** A read-only loopback registry serving one OCI image layout under an upstream name. */
export { LayoutRegistry } from './layout-registry';
