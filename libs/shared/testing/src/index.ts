/** Starts or finds the moto AWS-API emulator for integration tests. */
export { getAwsEmulator, type AwsEmulator } from './aws-emulator';
/** A fresh bucket in the emulator, created through the caller's S3 client factory. */
export { emulatorBucket, type EmulatorBucket } from './emulator-bucket';
/** Every file below a directory with its text, links listed and not followed. */
export { fileTree } from './file-tree';
/** Temporary directories with a cleanup function, or one per test (`useTempDir`). */
export { makeTempDir, useTempDir, type TempDir } from './temp-dir';
/** A temporary HOME with its own XDG directories, for CLI runs. */
export { makeTempHome, useTempHome, type TempHome } from './temp-home';
/** Unique, valid S3 bucket names for tests. */
export { uniqueBucketName } from './bucket-name';
/** Commits test desired state through the desired-state library (payloads, then index CAS). */
export {
  commitDesiredState,
  type CommitDesiredStateOptions,
  type DesiredStateChange,
  type TestDeployment,
} from './desired-state';
/** In-memory ObjectStore fake for unit tests. */
export { InMemoryObjectStore } from './in-memory-object-store';
/** Loopback ports and bounded polling for tests that drive real processes. */
export { freeLoopbackPort, waitFor } from './wait';
/** podmin-agent command lines for the local and aws providers, for agent specs. */
export {
  agentArgs,
  awsAgentArgs,
  localAgentArgs,
  localAgentFlags,
  type AgentFlagValues,
} from './agent-flags';
/** The built podmin-agent, started on loopback ports of the test's choosing. */
export {
  AGENT_BIN,
  agentNodeEnv,
  emulatorAgentEnv,
  freeAgentPorts,
  spawnBuiltAgent,
  type AgentPorts,
  type BuiltAgent,
  type BuiltAgentOptions,
} from './built-agent';
/** DaemonSet (and Service) manifests as a user deploys them: flow style, or block style. */
export {
  daemonSetManifest,
  daemonSetYaml,
  type TestDaemonSet,
  type TestDaemonSetYaml,
  type TestServicePort,
} from './manifests';
/** A complete published dependency manifest (both architectures, optionally the log packages). */
export { dependencyManifest, type TestDependencyManifest } from './dependency-manifest';
/** An `--otel-logs` value with every option and the module input setup writes for it. */
export { OTEL_LOGS_EXAMPLE } from './otel-logs';
/** The secrets `podmin setup` seeds before an agent starts (workload CA key, cluster CA). */
export { seedClusterSecrets, type SecretCreator } from './seeded-secrets';
/** Tiers that cannot run here: Jest's own skip and one `SKIPPED <tier>: <reason>` line. */
export {
  describeIf,
  describeIfRoot,
  describeUnless,
  isRoot,
  itIf,
  reportSkipped,
  which,
} from './skip';
/** The workspace root, for specs that run its scripts or read its build output. */
export { repoRoot } from './repo-root';
/** One CommonJS bundle of a TypeScript module, for specs that run it in a child process. */
export { bundleForNode } from './node-bundle';
/** The real OpenTofu/Terraform for infrastructure tests. */
export { findTestInfraEngine, type TestInfraEngine } from './infra-engine';
/** A loopback HTTP server shaped like the upstreams the dependency resolver reads. */
export {
  FakeUpstream,
  type FakeJoolBuild,
  type FakeRelease,
  type FakeUpstreamEndpoints,
} from './fake-upstream';
/** Deterministic artifact bytes the fake upstreams serve. */
export { artifact } from './fake-artifacts';
/** A read-only loopback registry serving one OCI image layout under an upstream name. */
export { LayoutRegistry } from './layout-registry';
/** The dual-stack endpoint rule, asserted on real AWS SDK clients from a podmin factory. */
export {
  expectDualStackUnlessEndpoint,
  type AwsSdkClientLike,
  type DualStackOptions,
} from './aws-client-rules';
/** A DaemonSet manifest with a RollingUpdate strategy, for rollout specs. */
export { rollingDaemonSetManifest, type TestRollingDaemonSet } from './rolling-daemon-set';
/** The built podmin-agent started on free loopback ports. */
export { startBuiltAgent, type StartedAgent } from './built-agent';
