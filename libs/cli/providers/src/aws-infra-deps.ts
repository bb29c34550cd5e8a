import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { AgentArtifact } from '@podmin/cli-data-access-dependencies';
import type { ClusterContext } from '@podmin/cli-util-config';
import type { InfraDeps, SetupDeps } from '@podmin/cli-feature-infra';
import type { Arch, Nat64Kernel } from '@podmin/util-dependencies';
import { ValidationError } from '@podmin/util-errors';
import type { ProviderShell } from './cli-provider';
import { storeSystemSecrets } from './system-secrets';

declare const __PODMIN_VERSION__: string | undefined;

/** The generated-files directory of a cluster: `<podmin cache>/infrastructure/<cluster>`. */
export function infrastructureDir(ctx: ProviderShell, cluster: string): string {
  return path.join(ctx.dirs.cache, 'infrastructure', cluster);
}

/**
 * Wires the ports every AWS infrastructure flow shares: the bucket, OpenTofu/Terraform in the
 * cluster's work directory (its output to stderr) and the module files.
 */
export async function infraDeps(
  ctx: ProviderShell,
  context: ClusterContext,
  assumeYes: boolean,
): Promise<InfraDeps> {
  const { findEngine, InfraEngine } = await import('@podmin/cli-data-access-infra-engine');
  const { embeddedAwsModule, readModuleDir } = await import('@podmin/cli-util-infra');
  const store = await ctx.openBucket(context);
  const executable = findEngine({
    ...(ctx.env.tfCmd === undefined ? {} : { tfCmd: ctx.env.tfCmd }),
    ...(ctx.env.path === undefined ? {} : { path: ctx.env.path }),
  });
  // Engine output goes line by line through the reporter, to stderr.
  let partial = '';
  const engine = new InfraEngine({
    executable,
    workDir: infrastructureDir(ctx, context.cluster),
    env: {
      ...(ctx.env.processEnv ?? {}),
      AWS_REGION: context.region,
      ...(context.profile === undefined ? {} : { AWS_PROFILE: context.profile }),
      TF_PLUGIN_CACHE_DIR: ctx.env.tfPluginCacheDir ?? path.join(ctx.dirs.cache, 'tf-plugins'),
      TF_IN_AUTOMATION: '1',
      TF_INPUT: '0',
    },
    output: (chunk) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) ctx.reporter.info(line);
    },
  });
  const { mkdir } = await import('node:fs/promises');
  await mkdir(ctx.env.tfPluginCacheDir ?? path.join(ctx.dirs.cache, 'tf-plugins'), {
    recursive: true,
  });
  return {
    reporter: ctx.reporter,
    cluster: context.cluster,
    region: context.region,
    bucket: context.bucket,
    store,
    engine,
    moduleFiles:
      ctx.env.testInfraModuleDir === undefined
        ? embeddedAwsModule()
        : readModuleDir(ctx.env.testInfraModuleDir),
    ...(ctx.env.s3Endpoint === undefined ? {} : { s3Endpoint: ctx.env.s3Endpoint }),
    assumeYes,
    interactive: process.stdin.isTTY === true,
  };
}

/**
 * `--agent-source` names a podmin checkout: checked before anything runs, as every setup flag
 * is, so a typo does not surface only after the provider checks.
 */
export function checkAgentSource(checkout: string): void {
  if (!fs.existsSync(path.join(checkout, 'tools', 'scripts', 'bundle.mjs'))) {
    throw new ValidationError(
      'checking the setup flags',
      [
        {
          field: '--agent-source',
          message: `${JSON.stringify(checkout)} is not a podmin checkout (no tools/scripts/bundle.mjs)`,
        },
      ],
      { code: 'INVALID_ARGUMENT' },
    );
  }
}

/**
 * Adds setup's ports: EC2, the dependency sync, the create-only CAs. With `agentSource`, the
 * sync publishes the agent artifact built from that checkout instead of the release.
 */
export async function setupDeps(
  ctx: ProviderShell,
  context: ClusterContext,
  assumeYes: boolean,
  agentSource?: string,
): Promise<SetupDeps> {
  const base = await infraDeps(ctx, context, assumeYes);
  const { createEc2Client, Ec2Catalog } = await import('@podmin/cli-data-access-ec2');
  const { DEBIAN_AMI_OWNER } = await import('@podmin/cli-util-infra');
  const catalog = new Ec2Catalog(
    createEc2Client({
      region: context.region,
      ...(context.profile === undefined ? {} : { profile: context.profile }),
      ...(ctx.env.ec2Endpoint === undefined ? {} : { endpoint: ctx.env.ec2Endpoint }),
    }),
  );
  return {
    ...base,
    catalog,
    amiOwner: ctx.env.testDebianAmiOwner ?? DEBIAN_AMI_OWNER,
    nat64Kernel: async (arch, imageName) => (await resolver(ctx)).imageKernel(arch, imageName),
    syncDependencies: (archs, nat64Kernels, otelLogs) =>
      syncDependencies(ctx, base, archs, nat64Kernels, otelLogs, agentSource),
    secretsProvider: context.secretsProvider,
    storeSystemSecrets: () => storeSystemSecrets(ctx, context),
    newGeneration: () => `${new Date().toISOString()}-${randomBytes(4).toString('hex')}`,
  };
}

const cliVersion = () =>
  typeof __PODMIN_VERSION__ === 'string' ? __PODMIN_VERSION__ : '0.0.0-dev';

/**
 * The upstream resolver (the loopback upstream under PODMIN_TEST_DEPENDENCY_BASE_URL), with
 * a locally built agent artifact in place of the published one when given.
 */
async function resolver(ctx: ProviderShell, agent?: AgentArtifact) {
  const { DependencyResolver, releaseEndpointsUnder } =
    await import('@podmin/cli-data-access-dependencies');
  return new DependencyResolver({
    cliVersion: cliVersion(),
    ...(ctx.env.testDependencyBaseUrl === undefined
      ? {}
      : { endpoints: releaseEndpointsUnder(ctx.env.testDependencyBaseUrl) }),
    ...(agent === undefined ? {} : { agent }),
  });
}

async function syncDependencies(
  ctx: ProviderShell,
  base: InfraDeps,
  archs: readonly Arch[],
  nat64Kernels: readonly Nat64Kernel[],
  otelLogs: boolean,
  agentSource: string | undefined,
) {
  const { DownloadCache, syncDependencies, buildAgentFromSource } =
    await import('@podmin/cli-data-access-dependencies');
  let agent: AgentArtifact | undefined;
  if (agentSource !== undefined) {
    ctx.reporter.info(`Building the podmin-agent artifact from ${path.resolve(agentSource)}`);
    agent = await buildAgentFromSource(agentSource, cliVersion());
    ctx.reporter.info(`Built podmin-agent ${agent.version}`);
  }
  const { DependencyImageMirror, RegistryClient } = await import('@podmin/cli-feature-image');
  const result = await syncDependencies(base.store, archs, {
    resolver: await resolver(ctx, agent),
    nat64Kernels,
    otelLogs,
    cache: new DownloadCache({
      dir: path.join(ctx.dirs.cache, 'downloads'),
      reporter: ctx.reporter,
    }),
    images: new DependencyImageMirror({
      store: await ctx.imageStore(),
      registry: new RegistryClient(),
      reporter: ctx.reporter,
    }),
    reporter: ctx.reporter,
  });
  return result.manifest;
}
