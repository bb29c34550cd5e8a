import path from 'node:path';
import { ValidationError, type FieldProblem } from '@podmin/util-errors';
import { checkS3BucketName } from '@podmin/util-names';
import { formatIpv6, parseIpv6 } from '@podmin/util-names';

/** Providers the agent runs on. */
export type AgentProvider = 'aws' | 'local';

/** The agent's validated, frozen configuration: exactly the spec's six flags. */
export interface AgentConfig {
  readonly provider: AgentProvider;
  /** S3 bucket name (aws) or absolute bucket directory (local). */
  readonly bucket: string;
  readonly region: string;
  readonly cluster: string;
  readonly nodegroup: string;
  /** Canonical /80 Pod prefix, e.g. `2600:1f14:abc:1200:1::/80`. */
  readonly ipv6Prefix: string;
}

/** The six flags, in the order `--help` lists them. */
export const AGENT_FLAGS = [
  'provider',
  'bucket',
  'region',
  'cluster',
  'nodegroup',
  'ipv6-prefix',
] as const;

const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const REGION = /^[a-z]{2}(-[a-z]+)+-\d+$/;

/**
 * Checks a Pod prefix: canonical RFC 5952 text of a /80 with zero host bits; global unicast
 * (2000::/3) always allowed, unique-local (fc00::/7) only when `allowUla`.
 */
export function checkPodPrefix(value: string, allowUla: boolean): string | undefined {
  const slash = value.indexOf('/');
  const addr = slash < 0 ? value : value.slice(0, slash);
  const len = slash < 0 ? '' : value.slice(slash + 1);
  const groups = parseIpv6(addr);
  const allowed = allowUla
    ? 'a global-unicast (2000::/3) or unique-local (fc00::/7) /80'
    : 'a global-unicast (2000::/3) /80';
  if (len !== '80' || !groups)
    return `${JSON.stringify(value)} must be ${allowed} such as 2600:1f14:abc:1200:1::/80`;
  if (groups.slice(5).some((g) => g !== 0))
    return `${JSON.stringify(value)} has host bits set beyond /80`;
  const first = groups[0] as number;
  const global = (first & 0xe000) === 0x2000;
  const ula = (first & 0xfe00) === 0xfc00;
  if (!global && !(allowUla && ula)) return `${JSON.stringify(value)} must be ${allowed}`;
  const canonical = `${formatIpv6(groups)}/80`;
  if (canonical !== value) return `${JSON.stringify(value)} is not canonical; write ${canonical}`;
  return undefined;
}

/**
 * Checks the agent's six flags, appending every bad one to `problems`; the values are
 * meaningful only when no problem was added.
 */
export function checkAgentFlags(
  flags: Readonly<Record<string, string | undefined>>,
  problems: FieldProblem[],
): AgentConfig {
  const get = (name: (typeof AGENT_FLAGS)[number]): string => {
    const value = flags[name];
    if (value === undefined || value === '')
      problems.push({ field: `--${name}`, message: 'is required' });
    return value ?? '';
  };
  const provider = get('provider');
  const bucket = get('bucket');
  const region = get('region');
  const cluster = get('cluster');
  const nodegroup = get('nodegroup');
  const prefix = get('ipv6-prefix');
  if (provider && provider !== 'aws' && provider !== 'local')
    problems.push({ field: '--provider', message: 'must be aws or local' });
  if (cluster && (!LABEL.test(cluster) || cluster.length > 40))
    problems.push({
      field: '--cluster',
      message: 'must be a DNS-1123 label of at most 40 characters',
    });
  if (nodegroup && (!LABEL.test(nodegroup) || nodegroup.length > 63))
    problems.push({ field: '--nodegroup', message: 'must be a DNS-1123 label' });
  if (provider === 'aws') {
    const why = bucket ? checkS3BucketName(bucket) : undefined;
    if (why) problems.push({ field: '--bucket', message: `must be an S3 bucket name: ${why}` });
    if (region && !REGION.test(region))
      problems.push({ field: '--region', message: 'must be an AWS region such as us-east-1' });
  }
  if (provider === 'local') {
    if (bucket && !path.isAbsolute(bucket))
      problems.push({
        field: '--bucket',
        message: 'must be an absolute directory path for the local provider',
      });
    if (region && region !== 'local')
      problems.push({ field: '--region', message: 'must be local for the local provider' });
  }
  if (prefix) {
    const why = checkPodPrefix(prefix, provider === 'local');
    if (why) problems.push({ field: '--ipv6-prefix', message: why });
  }
  return {
    provider: provider as AgentProvider,
    bucket,
    region,
    cluster,
    nodegroup,
    ipv6Prefix: prefix,
  };
}

/** Validates the six flags alone, listing every bad one (the process parser adds the environment). */
export function parseAgentConfig(flags: Readonly<Record<string, string | undefined>>): AgentConfig {
  const problems: FieldProblem[] = [];
  const config = checkAgentFlags(flags, problems);
  if (problems.length > 0)
    throw new ValidationError('podmin-agent configuration', problems, { code: 'INVALID_ARGUMENT' });
  return Object.freeze(config);
}
