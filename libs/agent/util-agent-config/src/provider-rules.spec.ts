import { ValidationError } from '@podmin/util-errors';
import { ProviderRegistry } from '@podmin/util-names';
import { parseAgentConfig } from './agent-config';
import { parseAgentProcessConfig } from './process-config';
import {
  awsAgentRules,
  discoverNodeAddress,
  localAgentRules,
  orList,
  type AgentProviderRules,
} from './provider-rules';

/** A third provider's rules: any `mem-` bucket, region `memory`, a fixed node identity. */
const memoryRules: AgentProviderRules = {
  checkBucket: (bucket) => (bucket.startsWith('mem-') ? undefined : 'must start with mem-'),
  checkRegion: (region) => (region === 'memory' ? undefined : 'must be memory'),
  allowsUniqueLocalPrefix: true,
  nodeRoot: { default: '/mem/node' },
  defaultSecretsFile: () => undefined,
  defaultNodeAddress: () => 'fd00::7',
  defaultNodeId: () => 'mem-node',
  dataplaneOnHostInterfaces: false,
};

const flags = (provider: string, bucket: string, region: string) => [
  ...['--provider', provider, '--bucket', bucket, '--region', region],
  ...['--cluster', 'demo', '--nodegroup', 'default', '--ipv6-prefix', 'fd00:1:2:3:4::/80'],
];

describe('agent provider rules through the parse', () => {
  const providers = new ProviderRegistry({
    aws: awsAgentRules,
    local: localAgentRules,
    memory: memoryRules,
  });

  it("reads a third provider's bucket, region and node identity rules", () => {
    const config = parseAgentProcessConfig(flags('memory', 'mem-1', 'memory'), {}, providers);
    expect(config).toMatchObject({
      provider: 'memory',
      nodeRoot: '/mem/node',
      nodeAddress: 'fd00::7',
      nodeId: 'mem-node',
      localSecretsFile: undefined,
      ipv6Prefix: 'fd00:1:2:3:4::/80',
    });
    expect(() =>
      parseAgentConfig({ provider: 'memory', bucket: 'b', region: 'x' }, providers),
    ).toThrow(/--bucket: must start with mem-[\s\S]*--region: must be memory/);
  });

  it('names every known provider when the flag names none of them', () => {
    let caught: unknown;
    try {
      parseAgentProcessConfig(flags('gcp', 'b-1', 'us-east1'), {}, providers);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ValidationError);
    expect((caught as ValidationError).code).toBe('INVALID_ARGUMENT');
    expect((caught as Error).message).toContain('--provider: must be aws, local or memory');
  });

  it('keeps the two built-in messages', () => {
    const builtIn = new ProviderRegistry({ aws: awsAgentRules, local: localAgentRules });
    expect(() => parseAgentConfig({ provider: 'gcp' }, builtIn)).toThrow(
      /--provider: must be aws or local/,
    );
    expect(localAgentRules.checkBucket('rel/dir')).toMatch(/absolute directory path/);
    expect(awsAgentRules.checkBucket('Bad_Bucket')).toMatch(/^must be an S3 bucket name: /);
    expect(awsAgentRules.checkRegion('local')).toMatch(/AWS region/);
    expect(localAgentRules.defaultSecretsFile('/n')).toBe('/n/var/lib/podmin/secrets.json');
    expect(awsAgentRules.defaultSecretsFile('/')).toBeUndefined();
  });
});

describe('discoverNodeAddress / orList', () => {
  it('takes the first global address and falls back to loopback', () => {
    const v6 = (address: string, internal = false) =>
      ({
        address,
        family: 'IPv6',
        internal,
        netmask: '',
        mac: '',
        cidr: null,
        scopeid: 0,
      }) as const;
    expect(
      discoverNodeAddress({ lo: [v6('::1', true)], eth0: [v6('fe80::1'), v6('2001:db8::5')] }),
    ).toBe('2001:db8::5');
    expect(discoverNodeAddress({ lo: [v6('::1', true)] })).toBe('::1');
  });

  it('joins names with commas and a final or', () => {
    expect(orList(['aws'])).toBe('aws');
    expect(orList(['aws', 'local'])).toBe('aws or local');
    expect(orList(['aws', 'gcp', 'local'])).toBe('aws, gcp or local');
  });
});
