import { localAgentFlags } from '@podmin/testing';
import { parseAgentArgs, serviceSpecs } from './agent';

describe('parseAgentArgs', () => {
  it('accepts exactly the six flags', () => {
    expect(parseAgentArgs(localAgentFlags)).toMatchObject({
      provider: 'local',
      nodegroup: 'default',
    });
    expect(parseAgentArgs(['--help'])).toBe('help');
  });

  it('rejects any other flag and names the allowed ones', () => {
    expect(() => parseAgentArgs([...localAgentFlags, '--verbose'])).toThrow(
      /--verbose[\s\S]*--provider, --bucket/,
    );
  });

  it('passes the bucket to the registry process', () => {
    const config = parseAgentArgs(localAgentFlags);
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
