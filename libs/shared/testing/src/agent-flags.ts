/** The six flags of a podmin-agent command line. */
export interface AgentFlagValues {
  provider: 'local' | 'aws';
  bucket: string;
  region: string;
  cluster: string;
  nodegroup: string;
  ipv6Prefix: string;
}

/** A podmin-agent command line with `values` (plain strings, so this library needs no agent code). */
export function agentArgs(values: AgentFlagValues): string[] {
  return [
    '--provider',
    values.provider,
    '--bucket',
    values.bucket,
    '--region',
    values.region,
    '--cluster',
    values.cluster,
    '--nodegroup',
    values.nodegroup,
    '--ipv6-prefix',
    values.ipv6Prefix,
  ];
}

/**
 * A valid podmin-agent command line for the local provider on `bucket` (cluster `demo`,
 * nodegroup `default`, a ULA prefix).
 */
export function localAgentArgs(bucket: string): string[] {
  return agentArgs({
    provider: 'local',
    bucket,
    region: 'local',
    cluster: 'demo',
    nodegroup: 'default',
    ipv6Prefix: 'fd00:1:2:3:4::/80',
  });
}

/**
 * A valid podmin-agent command line for the aws provider on `bucket` in `region` (nodegroup
 * `default` unless given, a global-unicast /80 as AWS delegates it).
 */
export function awsAgentArgs(
  bucket: string,
  region: string,
  cluster: string,
  nodegroup = 'default',
): string[] {
  return agentArgs({
    provider: 'aws',
    bucket,
    region,
    cluster,
    nodegroup,
    ipv6Prefix: '2600:1f14:abc:1200:1::/80',
  });
}

/** {@link localAgentArgs} on the bucket `/b`, for tests that never open it. */
export const localAgentFlags: readonly string[] = localAgentArgs('/b');
