import { localAgentFlags } from '@podmin/testing';
import { parseAgentProcessConfig } from './process-config';
import { ProviderRegistry } from '@podmin/util-names';
import { awsAgentRules, localAgentRules } from './provider-rules';

/** The two built-in providers' rules, as the agent's registry holds them. */
const providers = new ProviderRegistry({ aws: awsAgentRules, local: localAgentRules });

describe('parseAgentProcessConfig', () => {
  it('requires a node root for the local provider and derives the runtime directory', () => {
    expect(() => parseAgentProcessConfig(localAgentFlags, {}, providers)).toThrow(
      /PODMIN_NODE_ROOT: is required/,
    );
    const config = parseAgentProcessConfig(
      localAgentFlags,
      {
        PODMIN_NODE_ROOT: '/srv/node',
        PODMIN_NODE_ADDRESS: 'fd00::1',
      },
      providers,
    );
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
    expect(parseAgentProcessConfig(aws, {}, providers).nodeRoot).toBe('/');
    expect(() =>
      parseAgentProcessConfig(
        localAgentFlags,
        {
          PODMIN_NODE_ROOT: 'node',
          PODMIN_LOCAL_SECRETS_FILE: 'x.json',
        },
        providers,
      ),
    ).toThrow(/PODMIN_NODE_ROOT[\s\S]*PODMIN_LOCAL_SECRETS_FILE/);
  });

  it('reads the node ID, DNS and coordination settings and the election timings, naming each bad one', () => {
    const base = { PODMIN_NODE_ROOT: '/srv/node', PODMIN_NODE_ADDRESS: 'fd00::1' };
    const config = parseAgentProcessConfig(
      localAgentFlags,
      {
        ...base,
        PODMIN_NODE_ID: 'node-1',
        PODMIN_AGENT_DNS_LISTEN: '127.0.0.1:5353',
        PODMIN_AGENT_COORDINATION_PORT: '18081',
        PODMIN_ELECTION_LEASE_MS: '3000',
        PODMIN_ELECTION_POLL_MS: '500',
      },
      providers,
    );
    expect(config).toMatchObject({
      nodeId: 'node-1',
      dnsListen: { host: '127.0.0.1', port: 5353 },
      coordinationPort: 18081,
      kubeletPodsSocket: '/srv/node/var/lib/kubelet/pods-api/pods-api.sock',
      election: { leaseMs: 3000, pollMs: 500 },
    });
    expect(parseAgentProcessConfig(localAgentFlags, base, providers)).toMatchObject({
      dnsListen: { host: '127.0.0.1', port: 1053 },
      coordinationPort: 8081,
      election: { leaseMs: 35_000, pollMs: 5_000 },
    });
    let message = '';
    try {
      parseAgentProcessConfig(
        localAgentFlags,
        {
          ...base,
          PODMIN_NODE_ID: 'a/b',
          PODMIN_AGENT_DNS_LISTEN: '0.0.0.0:53',
          PODMIN_AGENT_COORDINATION_PORT: '70000',
          PODMIN_ELECTION_LEASE_MS: '1000',
          PODMIN_ELECTION_POLL_MS: '800',
          PODMIN_KUBELET_PODS_SOCKET: 'pods.sock',
        },
        providers,
      );
    } catch (err) {
      message = (err as Error).message;
    }
    for (const field of [
      'PODMIN_NODE_ID',
      'PODMIN_AGENT_DNS_LISTEN',
      'PODMIN_AGENT_COORDINATION_PORT',
      'PODMIN_ELECTION_POLL_MS',
      'PODMIN_KUBELET_PODS_SOCKET',
    ])
      expect(message).toContain(field);
  });
});
