import { parseAgentArgs, serviceSpecs } from './agent';

describe('parseAgentArgs', () => {
  const flags = [
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

  it('accepts exactly the six flags', () => {
    expect(parseAgentArgs(flags)).toMatchObject({ provider: 'local', nodegroup: 'default' });
    expect(parseAgentArgs(['--help'])).toBe('help');
  });

  it('rejects any other flag and names the allowed ones', () => {
    expect(() => parseAgentArgs([...flags, '--verbose'])).toThrow(
      /--verbose[\s\S]*--provider, --bucket/,
    );
  });

  it('passes the bucket to the registry process', () => {
    const config = parseAgentArgs(flags);
    if (typeof config === 'string') throw new Error('expected config');
    expect(
      serviceSpecs(config, '/opt/podmin/bin', {}).find((s) => s.name === 'registry'),
    ).toMatchObject({
      script: '/opt/podmin/bin/agent-registry.cjs',
      args: [
        '--provider',
        'local',
        '--bucket',
        '/b',
        '--region',
        'local',
        '--cluster',
        'demo',
        '--listen',
        '127.0.0.1:5000',
      ],
    });
  });
});
