import { localAgentFlags } from '@podmin/testing';
import { parseAgentProcessConfig } from './process-config';

describe('parseAgentProcessConfig', () => {
  it('requires a node root for the local provider and derives the runtime directory', () => {
    expect(() => parseAgentProcessConfig(localAgentFlags, {})).toThrow(
      /PODMIN_NODE_ROOT: is required/,
    );
    const config = parseAgentProcessConfig(localAgentFlags, {
      PODMIN_NODE_ROOT: '/srv/node',
      PODMIN_NODE_ADDRESS: 'fd00::1',
    });
    expect(config).toMatchObject({
      nodeRoot: '/srv/node',
      runtimeDir: '/srv/node/run/podmin/agent',
      nodeAddress: 'fd00::1',
      localSecretsFile: '/srv/node/var/lib/podmin/secrets.json',
    });
  });

  it('defaults a VM node root to / and rejects relative paths', () => {
    const aws = [
      '--provider',
      'aws',
      '--bucket',
      'podmin-demo',
      '--region',
      'us-east-1',
      '--cluster',
      'demo',
      '--nodegroup',
      'default',
      '--ipv6-prefix',
      '2600:1f14:abc:1200:1::/80',
    ];
    expect(parseAgentProcessConfig(aws, {}).nodeRoot).toBe('/');
    expect(() =>
      parseAgentProcessConfig(localAgentFlags, {
        PODMIN_NODE_ROOT: 'node',
        PODMIN_LOCAL_SECRETS_FILE: 'x.json',
      }),
    ).toThrow(/PODMIN_NODE_ROOT[\s\S]*PODMIN_LOCAL_SECRETS_FILE/);
  });
});
