import { ValidationError, type FieldProblem } from '@podmin/util-errors';
import { formatIpv6, parseIpv6 } from '@podmin/util-names';
import { checkClusterNodegroup, requiredFlag } from './flag-checks';
import { orList, type AgentProviderLookup } from './provider-rules';

/** The agent's validated, frozen configuration: exactly the spec's six flags. */
export interface AgentConfig {
  /** A provider name the parse's provider lookup knows (`aws`, `local`). */
  readonly provider: string;
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
 * Checks the agent's six flags, appending every bad one to `problems`, with the rules of the
 * provider `providers` knows by the `--provider` name; the values are meaningful only when no
 * problem was added.
 */
export function checkAgentFlags(
  flags: Readonly<Record<string, string | undefined>>,
  providers: AgentProviderLookup,
  problems: FieldProblem[],
): AgentConfig {
  const get = (name: (typeof AGENT_FLAGS)[number]): string => requiredFlag(flags, name, problems);
  const provider = get('provider');
  const bucket = get('bucket');
  const region = get('region');
  const cluster = get('cluster');
  const nodegroup = get('nodegroup');
  const prefix = get('ipv6-prefix');
  const rules = provider && providers.has(provider) ? providers.get(provider) : undefined;
  if (provider && rules === undefined)
    problems.push({ field: '--provider', message: `must be ${orList(providers.names)}` });
  checkClusterNodegroup(cluster, nodegroup, problems);
  const badBucket = bucket ? rules?.checkBucket(bucket) : undefined;
  if (badBucket) problems.push({ field: '--bucket', message: badBucket });
  const badRegion = region ? rules?.checkRegion(region) : undefined;
  if (badRegion) problems.push({ field: '--region', message: badRegion });
  if (prefix) {
    const why = checkPodPrefix(prefix, rules?.allowsUniqueLocalPrefix ?? false);
    if (why) problems.push({ field: '--ipv6-prefix', message: why });
  }
  return {
    provider,
    bucket,
    region,
    cluster,
    nodegroup,
    ipv6Prefix: prefix,
  };
}

/** Validates the six flags alone, listing every bad one (the process parser adds the environment). */
export function parseAgentConfig(
  flags: Readonly<Record<string, string | undefined>>,
  providers: AgentProviderLookup,
): AgentConfig {
  const problems: FieldProblem[] = [];
  const config = checkAgentFlags(flags, providers, problems);
  if (problems.length > 0)
    throw new ValidationError('podmin-agent configuration', problems, { code: 'INVALID_ARGUMENT' });
  return Object.freeze(config);
}
