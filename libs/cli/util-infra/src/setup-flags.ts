import { ValidationError, type FieldProblem } from '@podmin/util-errors';
import { isInstanceTypeName, parseNodeGroup, type NodeGroupRequest } from './nodegroup-flag';
import { parseOtelLogs, type OtelLogsConfig } from './otel-logs-flag';
import { parseWorkloadCaPublish, type WorkloadCaPublish } from './s3-object-flag';
import { vpcCidrProblems } from './vpc-cidr';

/** Instance type of the shared NAT64 instances when `--nat64` is given bare. */
export const DEFAULT_NAT64_INSTANCE_TYPE = 't4g.nano';

/** Everything `setup --vpc-cidr … --nodegroup … [--nat64]` asks for, validated. */
export interface SetupRequest {
  /** The canonical network address of the VPC's primary IPv4 CIDR. */
  vpcCidr: string;
  /** NodeGroups in the order given. */
  nodegroups: NodeGroupRequest[];
  /** The shared NAT64 instance type, when `--nat64` was given. */
  nat64?: { instanceType: string };
  /** The exact object `--workload-ca-publish s3://BUCKET/KEY` names, when given. */
  workloadCaPublish?: WorkloadCaPublish;
  /** Container log export (`--otel-logs`), when given; absent: Fluent Bit is not installed. */
  otelLogs?: OtelLogsConfig;
}

/** The raw flag values as the command line gave them. */
export interface SetupFlags {
  vpcCidr?: string;
  nodegroup?: readonly string[];
  /** `''` for a bare `--nat64`, `instance-type=T` otherwise; undefined when absent. */
  nat64?: string;
  /** `--workload-ca-publish`, undefined when absent. */
  workloadCaPublish?: string;
  /** `--otel-logs`, undefined when absent. */
  otelLogs?: string;
}

/** Parses `--nat64`: bare (`''`) means the default type, `instance-type=T` sets it. */
function parseNat64(value: string, problems: FieldProblem[]): { instanceType: string } | undefined {
  if (value === '') return { instanceType: DEFAULT_NAT64_INSTANCE_TYPE };
  const match = /^instance-type=(.*)$/.exec(value);
  if (match === null) {
    problems.push({
      field: '--nat64',
      message: `${JSON.stringify(value)} is not allowed; give --nat64 alone (${DEFAULT_NAT64_INSTANCE_TYPE}) or --nat64=instance-type=TYPE`,
    });
    return undefined;
  }
  const type = match[1] ?? '';
  if (!isInstanceTypeName(type)) {
    problems.push({
      field: '--nat64',
      message: `instance-type ${JSON.stringify(type)} is not an EC2 instance type such as t4g.nano`,
    });
    return undefined;
  }
  return { instanceType: type };
}

/**
 * Validates setup's flags before anything runs. Throws one ValidationError (INVALID_ARGUMENT)
 * listing every bad value, each naming its flag and what is allowed.
 */
export function parseSetupFlags(flags: SetupFlags): SetupRequest {
  const problems: FieldProblem[] = [];
  const cidr = flags.vpcCidr;
  if (cidr === undefined || cidr === '') {
    problems.push({ field: '--vpc-cidr', message: 'is required, e.g. --vpc-cidr 10.0.0.0/16' });
  } else {
    problems.push(...vpcCidrProblems(cidr));
  }
  const values = flags.nodegroup ?? [];
  if (values.length === 0) {
    problems.push({
      field: '--nodegroup',
      message: 'at least one is required, e.g. --nodegroup default (the list is authoritative)',
    });
  }
  const nodegroups: NodeGroupRequest[] = [];
  const names = new Set<string>();
  values.forEach((value, index) => {
    const name = value.split(',')[0] ?? '';
    if (names.has(name)) {
      problems.push({
        field: `--nodegroup[${index}]`,
        message: `NodeGroup ${name} is given more than once; each name may appear once`,
      });
    }
    names.add(name);
    const group = parseNodeGroup(value, index, problems);
    if (group !== undefined) nodegroups.push(group);
  });
  const nat64 = flags.nat64 === undefined ? undefined : parseNat64(flags.nat64, problems);
  let workloadCaPublish: WorkloadCaPublish | undefined;
  if (flags.workloadCaPublish !== undefined) {
    const publish = parseWorkloadCaPublish(flags.workloadCaPublish);
    if ('field' in publish) problems.push(publish);
    else workloadCaPublish = publish;
  }
  let otelLogs: OtelLogsConfig | undefined;
  if (flags.otelLogs !== undefined) {
    const parsed = parseOtelLogs(flags.otelLogs);
    if (Array.isArray(parsed)) problems.push(...parsed);
    else otelLogs = parsed;
  }
  if (problems.length > 0) {
    throw new ValidationError('checking setup flags', problems, {
      code: 'INVALID_ARGUMENT',
      hint: 'see `podmin setup --help`',
    });
  }
  return {
    vpcCidr: cidr as string,
    nodegroups,
    ...(nat64 === undefined ? {} : { nat64 }),
    ...(workloadCaPublish === undefined ? {} : { workloadCaPublish }),
    ...(otelLogs === undefined ? {} : { otelLogs }),
  };
}
