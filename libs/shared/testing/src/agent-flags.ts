/**
 * A valid podmin-agent command line for the local provider (bucket `/b`, cluster `demo`,
 * nodegroup `default`, a ULA prefix): plain strings, so this library needs no agent code.
 */
export const localAgentFlags: readonly string[] = [
  '--provider',
  'local',
  '--bucket',
  '/b',
  '--region',
  'local',
  '--cluster',
  'demo',
  '--nodegroup',
  'default',
  '--ipv6-prefix',
  'fd00:1:2:3:4::/80',
];
