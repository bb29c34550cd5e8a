/**
 * A valid podmin-agent command line for the local provider on `bucket` (cluster `demo`,
 * nodegroup `default`, a ULA prefix): plain strings, so this library needs no agent code.
 */
export function localAgentArgs(bucket: string): string[] {
  return [
    '--provider',
    'local',
    '--bucket',
    bucket,
    '--region',
    'local',
    '--cluster',
    'demo',
    '--nodegroup',
    'default',
    '--ipv6-prefix',
    'fd00:1:2:3:4::/80',
  ];
}

/** {@link localAgentArgs} on the bucket `/b`, for tests that never open it. */
export const localAgentFlags: readonly string[] = localAgentArgs('/b');
