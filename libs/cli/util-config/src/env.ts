/** Settings the CLI takes from its environment; the only place that reads process.env. */
export interface CliEnvironment {
  /** Overrides the S3 endpoint (AWS_ENDPOINT_URL_S3, else AWS_ENDPOINT_URL), e.g. an emulator. */
  s3Endpoint?: string;
  /** Overrides the SSM endpoint (AWS_ENDPOINT_URL_SSM, else AWS_ENDPOINT_URL). */
  ssmEndpoint?: string;
  /** Overrides the Secrets Manager endpoint. */
  secretsManagerEndpoint?: string;
  /** Default AWS region (AWS_REGION, else AWS_DEFAULT_REGION). */
  awsRegion?: string;
  /** Default AWS profile (AWS_PROFILE). */
  awsProfile?: string;
  /** Local node: loopback host:port of the agent's health endpoints (PODMIN_LOCAL_HEALTH_ADDRESS). */
  localHealthAddress?: string;
  /** Local node: loopback host:port of the agent's registry (PODMIN_LOCAL_REGISTRY_LISTEN). */
  localRegistryListen?: string;
  /** Local node: loopback host:port of the agent's Service DNS (PODMIN_LOCAL_DNS_LISTEN). */
  localDnsListen?: string;
  /** Local node: TCP port of the agent's coordination gRPC (PODMIN_LOCAL_COORDINATION_PORT). */
  localCoordinationPort?: string;
  /** Local node: kubelet's Pod log directory `podmin logs` reads (PODMIN_POD_LOG_DIR; /var/log/pods). */
  podLogDir?: string;
  /** Local node: directory with the node-stack binaries besides PATH (PODMIN_NODE_STACK_BIN). */
  nodeStackBin?: string;
  /** The program search path (PATH), for finding node-stack binaries and OpenTofu/Terraform. */
  path?: string;
  /** Overrides the EC2 endpoint (AWS_ENDPOINT_URL_EC2, else AWS_ENDPOINT_URL). */
  ec2Endpoint?: string;
  /** Overrides the KMS endpoint (AWS_ENDPOINT_URL_KMS, else AWS_ENDPOINT_URL). */
  kmsEndpoint?: string;
  /** The deployer's local signing key file (PODMIN_SIGNING_KEY); `--signing-key` wins. */
  signingKey?: string;
  /** The deployer's AWS KMS signing key ARN (PODMIN_KMS_KEY); `--kms-key` wins. */
  kmsKey?: string;
  /** The trusted deployer name signatures carry (PODMIN_SIGNER); `--signer` wins. */
  signer?: string;
  /** The OpenTofu/Terraform executable (PODMIN_TF_CMD); otherwise tofu, then terraform on PATH. */
  tfCmd?: string;
  /** The engine's provider cache (TF_PLUGIN_CACHE_DIR); `<podmin cache>/tf-plugins` otherwise. */
  tfPluginCacheDir?: string;
  /** Tests only: the owner of the Debian AMIs instead of Debian's (PODMIN_TEST_DEBIAN_AMI_OWNER). */
  testDebianAmiOwner?: string;
  /** Tests only: a module directory used instead of the embedded infra/aws (PODMIN_TEST_INFRA_MODULE_DIR). */
  testInfraModuleDir?: string;
  /**
   * Tests only: one loopback base URL that replaces every upstream the dependency resolver reads
   * (PODMIN_TEST_DEPENDENCY_BASE_URL; see `releaseEndpointsUnder`).
   */
  testDependencyBaseUrl?: string;
  /**
   * Tests only: the base URL of a loopback registry that serves every upstream image `podmin
   * install` pulls, under its upstream name (PODMIN_TEST_UPSTREAM_REGISTRY_URL).
   */
  testUpstreamRegistryUrl?: string;
  /**
   * Tests only: `<version>@sha256:<hex>` replacing the cloudflared pin, for a stand-in image
   * (PODMIN_TEST_CLOUDFLARED_PIN); the real upstream digest cannot be served here.
   */
  testCloudflaredPin?: string;
  /**
   * The context this invocation uses instead of the saved current one (PODMIN_CONTEXT);
   * `--context` wins over it. Never saved.
   */
  context?: string;
  /** The whole environment, handed to child processes such as OpenTofu/Terraform. */
  processEnv?: Readonly<Record<string, string | undefined>>;
}

/** Reads the CLI's environment once. */
export function readCliEnvironment(
  env: Readonly<Record<string, string | undefined>> = process.env,
): CliEnvironment {
  const pick = (...names: string[]): string | undefined => {
    for (const n of names) {
      const v = env[n];
      if (v) return v;
    }
    return undefined;
  };
  const out: CliEnvironment = { processEnv: { ...env } };
  const s3 = pick('AWS_ENDPOINT_URL_S3', 'AWS_ENDPOINT_URL');
  const ssm = pick('AWS_ENDPOINT_URL_SSM', 'AWS_ENDPOINT_URL');
  const sm = pick('AWS_ENDPOINT_URL_SECRETS_MANAGER', 'AWS_ENDPOINT_URL');
  const region = pick('AWS_REGION', 'AWS_DEFAULT_REGION');
  const profile = pick('AWS_PROFILE');
  if (s3) out.s3Endpoint = s3;
  if (ssm) out.ssmEndpoint = ssm;
  if (sm) out.secretsManagerEndpoint = sm;
  if (region) out.awsRegion = region;
  if (profile) out.awsProfile = profile;
  const health = pick('PODMIN_LOCAL_HEALTH_ADDRESS');
  const registry = pick('PODMIN_LOCAL_REGISTRY_LISTEN');
  if (health) out.localHealthAddress = health;
  if (registry) out.localRegistryListen = registry;
  const dnsListen = pick('PODMIN_LOCAL_DNS_LISTEN');
  if (dnsListen) out.localDnsListen = dnsListen;
  const coordinationPort = pick('PODMIN_LOCAL_COORDINATION_PORT');
  if (coordinationPort) out.localCoordinationPort = coordinationPort;
  const stackBin = pick('PODMIN_NODE_STACK_BIN');
  if (stackBin) out.nodeStackBin = stackBin;
  const searchPath = pick('PATH');
  if (searchPath) out.path = searchPath;
  const ec2 = pick('AWS_ENDPOINT_URL_EC2', 'AWS_ENDPOINT_URL');
  if (ec2) out.ec2Endpoint = ec2;
  const kms = pick('AWS_ENDPOINT_URL_KMS', 'AWS_ENDPOINT_URL');
  if (kms) out.kmsEndpoint = kms;
  const signingKey = pick('PODMIN_SIGNING_KEY');
  if (signingKey) out.signingKey = signingKey;
  const kmsKey = pick('PODMIN_KMS_KEY');
  if (kmsKey) out.kmsKey = kmsKey;
  const signer = pick('PODMIN_SIGNER');
  if (signer) out.signer = signer;
  const tfCmd = pick('PODMIN_TF_CMD');
  if (tfCmd) out.tfCmd = tfCmd;
  const pluginCache = pick('TF_PLUGIN_CACHE_DIR');
  if (pluginCache) out.tfPluginCacheDir = pluginCache;
  const amiOwner = pick('PODMIN_TEST_DEBIAN_AMI_OWNER');
  if (amiOwner) out.testDebianAmiOwner = amiOwner;
  const moduleDir = pick('PODMIN_TEST_INFRA_MODULE_DIR');
  if (moduleDir) out.testInfraModuleDir = moduleDir;
  const dependencyBase = pick('PODMIN_TEST_DEPENDENCY_BASE_URL');
  if (dependencyBase) out.testDependencyBaseUrl = dependencyBase;
  const upstreamRegistry = pick('PODMIN_TEST_UPSTREAM_REGISTRY_URL');
  if (upstreamRegistry) out.testUpstreamRegistryUrl = upstreamRegistry;
  const context = pick('PODMIN_CONTEXT');
  if (context) out.context = context;
  const podLogDir = pick('PODMIN_POD_LOG_DIR');
  if (podLogDir) out.podLogDir = podLogDir;
  const cloudflaredPin = pick('PODMIN_TEST_CLOUDFLARED_PIN');
  if (cloudflaredPin) out.testCloudflaredPin = cloudflaredPin;
  return out;
}
