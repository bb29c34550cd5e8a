import { ValidationError, PodminError, type FieldProblem } from '@podmin/util-errors';
import { JOOL_DEPENDENCY, type Arch, type Nat64Kernel } from '@podmin/util-dependencies';
import { renderAwsUserData } from '@podmin/cli-util-userdata';
import { writeWorkDir } from '@podmin/cli-data-access-infra-engine';
import {
  TFVARS_OBJECT_KEY,
  decideVpc,
  instanceTypeArch,
  latestDebianImage,
  otelLogsVars,
  resolveZoneName,
  serializeModuleVars,
  type ModuleVars,
  type Nat64Vars,
  type NodeGroupVars,
  type SetupRequest,
  type VpcDecision,
} from '@podmin/cli-util-infra';
import type { SetupDeps } from './infra.ports';
import {
  SETUP_PLAN,
  assertCanConfirm,
  checkEngine,
  confirmOrCancel,
  initBackend,
  withLockRecovery,
} from './engine-run';

/** A NodeGroup after the provider checks: zone resolved, architecture known. */
export interface ResolvedNodeGroup {
  name: string;
  size: number;
  diskSize: number;
  instanceType: string;
  zone: string;
  arch: Arch;
  nat64: Nat64Vars | null;
}

/** What the provider checks established. */
export interface ProviderPlan {
  nodegroups: ResolvedNodeGroup[];
  nat64: Nat64Vars | null;
  amis: Partial<Record<Arch, string>>;
  /** Names of the pinned AMIs (Debian's build version is in them). */
  amiNames: Partial<Record<Arch, string>>;
  /** Architectures of the NAT64 instances, shared and dedicated. */
  nat64Archs: Arch[];
  vpc: VpcDecision;
  /** Architectures of the NodeGroups (what the dependency set must cover). */
  nodeArchs: Arch[];
}

/**
 * The provider pre-checks of setup, all read-only: zones, instance types (Nitro, IPv6, ≥ 2
 * ENIs, architecture), the latest Debian 13 AMI per architecture and the VPC. Every problem is
 * reported at once, before anything is written.
 */
export async function checkProvider(
  request: SetupRequest,
  deps: Pick<SetupDeps, 'catalog' | 'amiOwner' | 'region' | 'cluster' | 'reporter'>,
): Promise<ProviderPlan> {
  const { catalog, region } = deps;
  const problems: FieldProblem[] = [];
  const zones = await catalog.availableZones();
  const firstZone = zones[0];
  if (firstZone === undefined) {
    throw new PodminError('SERVICE_UNAVAILABLE', `checking zones of ${region}: none is available`);
  }
  const types = await catalog.instanceTypes([
    ...request.nodegroups.flatMap((g) => [g.instanceType, ...(g.nat64 ? [g.nat64] : [])]),
    ...(request.nat64 ? [request.nat64.instanceType] : []),
  ]);
  const archOf = (type: string, field: string): Arch | undefined => {
    const facts = types.get(type);
    if (facts === undefined) {
      problems.push({ field, message: `${type} is not an instance type EC2 offers in ${region}` });
      return undefined;
    }
    const checked = instanceTypeArch(facts, field);
    if ('problems' in checked) {
      problems.push(...checked.problems);
      return undefined;
    }
    return checked.arch;
  };
  const sharedArch = request.nat64
    ? archOf(request.nat64.instanceType, '--nat64 instance-type')
    : undefined;
  const nat64 =
    request.nat64 && sharedArch
      ? { instance_type: request.nat64.instanceType, arch: sharedArch }
      : null;
  const nodegroups: ResolvedNodeGroup[] = [];
  for (const group of request.nodegroups) {
    const at = `--nodegroup ${group.name}`;
    let zone = firstZone;
    if (group.zone !== undefined) {
      const resolved = resolveZoneName(group.zone, region);
      if (resolved === undefined || !zones.includes(resolved)) {
        problems.push({
          field: `${at} zone`,
          message: `${group.zone} is not an available zone of ${region}; available: ${zones.join(', ')}`,
        });
        continue;
      }
      zone = resolved;
    }
    const arch = archOf(group.instanceType, `${at} instance-type`);
    const dedicatedArch = group.nat64 ? archOf(group.nat64, `${at} nat64`) : undefined;
    if (arch === undefined || (group.nat64 !== undefined && dedicatedArch === undefined)) continue;
    nodegroups.push({
      name: group.name,
      size: group.size,
      diskSize: group.diskSize,
      instanceType: group.instanceType,
      zone,
      arch,
      nat64:
        group.nat64 && dedicatedArch ? { instance_type: group.nat64, arch: dedicatedArch } : null,
    });
  }
  if (problems.length > 0) {
    throw new ValidationError('checking setup against the provider', problems, {
      code: 'INVALID_ARGUMENT',
    });
  }
  const nodeArchs = [...new Set(nodegroups.map((g) => g.arch))].sort();
  const nat64Archs = [
    ...new Set([
      ...nodegroups.flatMap((g) => (g.nat64 ? [g.nat64.arch] : [])),
      ...(nat64 ? [nat64.arch] : []),
    ]),
  ].sort();
  const allArchs = [...new Set([...nodeArchs, ...nat64Archs])].sort();
  const amis: Partial<Record<Arch, string>> = {};
  const amiNames: Partial<Record<Arch, string>> = {};
  for (const arch of allArchs) {
    const image = latestDebianImage(await catalog.debianImages(arch, deps.amiOwner), arch);
    if (image === undefined) {
      throw new PodminError(
        'NOT_FOUND',
        `finding the Debian 13 ${arch} AMI in ${region}: owner ${deps.amiOwner} publishes none named debian-13-${arch}-*`,
      );
    }
    amis[arch] = image.imageId;
    amiNames[arch] = image.name;
    deps.reporter.info(`Debian 13 ${arch} AMI: ${image.imageId} (${image.name})`);
  }
  const nat64Zones = new Set([
    ...(nat64 ? nodegroups.filter((g) => g.nat64 === null).map((g) => g.zone) : []),
  ]);
  const needed64s = nodegroups.length + nat64Zones.size;
  const vpc = decideVpc(
    request.vpcCidr,
    deps.cluster,
    await catalog.vpcsByPrimaryCidr(request.vpcCidr),
    needed64s,
  );
  deps.reporter.info(
    vpc.kind === 'reuse'
      ? `Reusing VPC ${vpc.vpcId} (${request.vpcCidr}); podmin never deletes it`
      : vpc.kind === 'managed'
        ? `VPC ${vpc.vpcId} (${request.vpcCidr}) is this cluster's`
        : `A VPC with ${request.vpcCidr} will be created`,
  );
  return { nodegroups, nat64, amis, amiNames, nat64Archs, vpc, nodeArchs };
}

/**
 * The exact initial kernel of the pinned AMI of every NAT64 architecture, from Debian's image
 * manifest: the Jool modules mirrored for NAT64 must match it.
 */
async function nat64KernelsOf(
  plan: ProviderPlan,
  deps: Pick<SetupDeps, 'nat64Kernel' | 'reporter'>,
): Promise<Nat64Kernel[]> {
  const kernels: Nat64Kernel[] = [];
  for (const arch of plan.nat64Archs) {
    const name = plan.amiNames[arch];
    if (name === undefined) throw new PodminError('INTERNAL', `no AMI was pinned for ${arch}`);
    const kernel = await deps.nat64Kernel(arch, name);
    deps.reporter.info(`NAT64 ${arch}: ${name} boots kernel ${kernel.kernelRelease}`);
    kernels.push(kernel);
  }
  return kernels;
}

/** Builds the module inputs from the checked plan and the rendered user data. */
export function buildModuleVars(
  deps: Pick<SetupDeps, 'cluster' | 'region' | 'bucket'>,
  request: SetupRequest,
  plan: ProviderPlan,
  userData: ReadonlyMap<string, string>,
  generation: string,
): ModuleVars {
  const nodegroups: Record<string, NodeGroupVars> = {};
  for (const g of plan.nodegroups) {
    nodegroups[g.name] = {
      size: g.size,
      disk_size: g.diskSize,
      instance_type: g.instanceType,
      zone: g.zone,
      arch: g.arch,
      nat64: g.nat64,
      user_data: userData.get(g.name) ?? '',
    };
  }
  return {
    cluster: deps.cluster,
    region: deps.region,
    bucket: deps.bucket,
    vpc_cidr: request.vpcCidr,
    existing_vpc_id: plan.vpc.kind === 'reuse' ? plan.vpc.vpcId : null,
    amis: plan.amis,
    nat64: plan.nat64,
    nat64_generation: generation,
    nodegroups,
    workload_ca_publish: request.workloadCaPublish
      ? { bucket: request.workloadCaPublish.bucket, key: request.workloadCaPublish.key }
      : null,
    otel_logs: otelLogsVars(request.otelLogs),
  };
}

/** Where nodes read the exporter headers: the context's provider, which must be an AWS one. */
function headersProvider(
  request: SetupRequest,
  deps: Pick<SetupDeps, 'secretsProvider'>,
): 'aws-parameter-store' | 'aws-secrets-manager' | undefined {
  if (request.otelLogs?.headersSecret !== true) return undefined;
  const provider = deps.secretsProvider;
  if (provider === 'aws-parameter-store' || provider === 'aws-secrets-manager') return provider;
  throw new ValidationError(
    'checking setup flags',
    [
      {
        field: '--otel-logs headers-secret',
        message: `the context's secrets provider ${provider} is not one nodes can read; headers-secret=true needs aws-parameter-store or aws-secrets-manager`,
      },
    ],
    { code: 'INVALID_ARGUMENT', hint: 'podmin connect --secrets-provider aws-parameter-store' },
  );
}

/**
 * `podmin setup` on AWS: engine check, provider pre-checks, dependency sync, user data per
 * NodeGroup, generated files (also uploaded to the bucket), create-only CAs, then init, plan,
 * confirmation and apply. Progress goes to the reporter (stderr).
 */
export async function setupAwsCluster(request: SetupRequest, deps: SetupDeps): Promise<void> {
  const doing = `setting up ${deps.cluster}`;
  assertCanConfirm(deps, doing);
  const otelHeadersProvider = headersProvider(request, deps);
  await checkEngine(deps);
  deps.reporter.info(`Checking ${deps.region} for the NodeGroups, AMIs and VPC`);
  const plan = await checkProvider(request, deps);
  const nat64Kernels = await nat64KernelsOf(plan, deps);
  deps.reporter.info(`Publishing the node dependencies for ${plan.nodeArchs.join(', ')}`);
  if (request.otelLogs !== undefined) {
    deps.reporter.info(
      `Container logs: Fluent Bit exports to ${request.otelLogs.endpoint} (OTLP/${request.otelLogs.protocol === 'grpc' ? 'gRPC' : 'HTTP'})`,
    );
  }
  const manifest = await deps.syncDependencies(
    plan.nodeArchs,
    nat64Kernels,
    request.otelLogs !== undefined,
  );
  for (const kernel of nat64Kernels) {
    const jool = manifest.dependencies[JOOL_DEPENDENCY]?.[kernel.arch];
    if (jool !== undefined)
      deps.reporter.info(`Jool ${jool.version} (${kernel.arch}) is ${jool.path}`);
  }
  const userData = new Map<string, string>();
  for (const g of plan.nodegroups) {
    userData.set(
      g.name,
      renderAwsUserData({
        arch: g.arch,
        cluster: deps.cluster,
        nodegroup: g.name,
        bucket: deps.bucket,
        region: deps.region,
        manifest,
        ...(request.workloadCaPublish === undefined
          ? {}
          : { workloadCaPublish: request.workloadCaPublish.url }),
        ...(request.otelLogs === undefined
          ? {}
          : {
              otelLogs: {
                endpoint: request.otelLogs.endpoint,
                protocol: request.otelLogs.protocol,
                mtls: request.otelLogs.mtls,
                ...(request.otelLogs.ca === undefined ? {} : { ca: request.otelLogs.ca.url }),
                ...(otelHeadersProvider === undefined
                  ? {}
                  : { headersProvider: otelHeadersProvider }),
              },
            }),
      }),
    );
  }
  const vars = buildModuleVars(deps, request, plan, userData, deps.newGeneration());
  const tfvars = serializeModuleVars(vars);
  if (deps.moduleFiles.length === 0) {
    throw new PodminError(
      'INTERNAL',
      `${doing}: this podmin carries no AWS module (infra/aws was empty when it was built)`,
    );
  }
  await writeWorkDir(deps.engine.workDir, deps.moduleFiles, tfvars);
  await deps.store.put(TFVARS_OBJECT_KEY, tfvars);
  deps.reporter.info(
    `Wrote the module and its inputs to ${deps.engine.workDir} and ${TFVARS_OBJECT_KEY}`,
  );
  await deps.storeSystemSecrets();
  await withLockRecovery(deps, () => initBackend(deps));
  const changes = await withLockRecovery(deps, () => deps.engine.plan(SETUP_PLAN));
  if (!changes) {
    deps.reporter.info(`The infrastructure of ${deps.cluster} is up to date`);
    return;
  }
  await confirmOrCancel(deps, `Apply this plan to ${deps.cluster} in ${deps.region}?`, doing);
  await withLockRecovery(deps, () => deps.engine.apply(SETUP_PLAN));
  deps.reporter.info(`Cluster ${deps.cluster} is set up`);
}
