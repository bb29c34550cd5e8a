import { localAgentFlags } from '@podmin/testing';
import { parseAgentArgs, serviceSpecs } from './agent';

const env = { PODMIN_NODE_ROOT: '/srv/node' };

describe('parseAgentArgs', () => {
  it('accepts exactly the six flags', () => {
    expect(parseAgentArgs(localAgentFlags, env)).toMatchObject({
      provider: 'local',
      nodegroup: 'default',
    });
    expect(parseAgentArgs(['--help'], env)).toBe('help');
  });

  it('rejects any other flag and names the allowed ones', () => {
    expect(() => parseAgentArgs([...localAgentFlags, '--verbose'], env)).toThrow(
      /--verbose[\s\S]*--provider, --bucket/,
    );
  });

  it('passes every service process the same six flags', () => {
    const config = parseAgentArgs(localAgentFlags, env);
    if (typeof config === 'string') throw new Error('expected config');
    expect(
      serviceSpecs(config, '/opt/podmin/bin').find((s) => s.name === 'registry'),
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
        '--nodegroup',
        'default',
        '--ipv6-prefix',
        localAgentFlags[localAgentFlags.length - 1],
      ],
    });
  });

  it('runs the control-plane services lean and keeps the registry, DNS and dataplane fast', () => {
    const config = parseAgentArgs(localAgentFlags, env);
    if (typeof config === 'string') throw new Error('expected config');
    expect(
      Object.fromEntries(serviceSpecs(config, '/opt/podmin/bin').map((s) => [s.name, s.memory])),
    ).toEqual({
      staticpod: 'lean',
      coordinator: 'lean',
      dns: 'fast',
      identity: 'lean',
      registry: 'fast',
      dataplane: 'fast',
    });
  });

  it('stops the dataplane last, after the services Pods depend on', () => {
    const config = parseAgentArgs(localAgentFlags, env);
    if (typeof config === 'string') throw new Error('expected config');
    const order = serviceSpecs(config, '/opt/podmin/bin')
      .sort((a, b) => a.stopOrder - b.stopOrder)
      .map((s) => s.name);
    expect(order).toEqual(['staticpod', 'coordinator', 'dns', 'registry', 'identity', 'dataplane']);
  });
});
