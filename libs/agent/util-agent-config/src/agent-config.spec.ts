import { checkPodPrefix, parseAgentConfig } from './agent-config';
import { formatIpv6, parseIpv6, ProviderRegistry } from '@podmin/util-names';
import { awsAgentRules, localAgentRules } from './provider-rules';

/** The two built-in providers' rules, as the agent's registry holds them. */
const providers = new ProviderRegistry({ aws: awsAgentRules, local: localAgentRules });

const good = {
  provider: 'aws',
  bucket: 'podmin-demo',
  region: 'us-west-2',
  cluster: 'demo',
  nodegroup: 'workers',
  'ipv6-prefix': '2600:1f14:abc:1200:1::/80',
};

describe('parseAgentConfig', () => {
  it('accepts exactly the six flags and freezes the result', () => {
    const config = parseAgentConfig(good, providers);
    expect(config).toEqual({
      provider: 'aws',
      bucket: 'podmin-demo',
      region: 'us-west-2',
      cluster: 'demo',
      nodegroup: 'workers',
      ipv6Prefix: '2600:1f14:abc:1200:1::/80',
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('names every bad flag at once', () => {
    let message = '';
    try {
      parseAgentConfig(
        {
          provider: 'gcp',
          cluster: 'Demo',
          nodegroup: '',
          'ipv6-prefix': '2600::/64',
        },
        providers,
      );
    } catch (err) {
      message = (err as Error).message;
    }
    for (const flag of [
      '--provider',
      '--bucket',
      '--region',
      '--cluster',
      '--nodegroup',
      '--ipv6-prefix',
    ])
      expect(message).toContain(`${flag}:`);
  });

  it('accepts a ULA prefix only for the local provider', () => {
    const local = {
      ...good,
      provider: 'local',
      bucket: '/var/lib/podmin/bucket',
      region: 'local',
      'ipv6-prefix': 'fd00:1:2:3:4::/80',
    };
    expect(parseAgentConfig(local, providers).ipv6Prefix).toBe('fd00:1:2:3:4::/80');
    expect(() =>
      parseAgentConfig({ ...good, 'ipv6-prefix': 'fd00:1:2:3:4::/80' }, providers),
    ).toThrow(/global-unicast/);
  });
});

describe('checkPodPrefix', () => {
  it.each([
    ['2600:1f14:abc:1200:1::/80', undefined],
    ['2600:1F14:abc:1200:1::/80', /not canonical; write 2600:1f14:abc:1200:1::\/80/],
    ['2600:1f14:0abc:1200:1::/80', /not canonical/],
    ['2600:1f14:abc:1200:1:0:0:0/80', /not canonical/],
    ['2600:1f14:abc:1200:1::1/80', /host bits/],
    ['2600:1f14:abc:1200::/64', /must be/],
    ['fe80::/80', /must be/],
    ['::1/80', /host bits/],
    ['::/80', /must be/],
    ['nonsense', /must be/],
  ])('%s', (value, expected) => {
    const why = checkPodPrefix(value, false);
    if (expected === undefined) expect(why).toBeUndefined();
    else expect(why).toMatch(expected);
  });
});

describe('ipv6 text', () => {
  it('round-trips to RFC 5952 form', () => {
    expect(formatIpv6(parseIpv6('2001:0db8:0000:0000:0001:0000:0000:0001')!)).toBe(
      '2001:db8::1:0:0:1',
    );
    expect(formatIpv6(parseIpv6('::')!)).toBe('::');
    expect(formatIpv6(parseIpv6('2001:db8:0:1:1:1:1:1')!)).toBe('2001:db8:0:1:1:1:1:1');
    expect(parseIpv6('1::2::3')).toBeUndefined();
    expect(parseIpv6('12345::')).toBeUndefined();
  });
});
