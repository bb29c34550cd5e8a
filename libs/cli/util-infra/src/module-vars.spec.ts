import { parseModuleVars, serializeModuleVars, type ModuleVars } from './module-vars';

const vars: ModuleVars = {
  nodegroups: {
    default: {
      zone: 'us-west-2a',
      size: 1,
      disk_size: 20,
      instance_type: 't4g.small',
      arch: 'arm64',
      nat64: null,
      user_data: '#!/bin/sh\n',
    },
  },
  cluster: 'demo',
  region: 'us-west-2',
  bucket: 'podmin-demo-abc',
  vpc_cidr: '10.0.0.0/16',
  existing_vpc_id: null,
  amis: { arm64: 'ami-1' },
  nat64: null,
  nat64_generation: 'g1',
};

describe('module vars', () => {
  it('serializes canonically with sorted keys and round-trips', () => {
    const text = serializeModuleVars(vars);
    expect(text.endsWith('}\n')).toBe(true);
    expect(Object.keys(JSON.parse(text) as object)).toEqual([
      'amis',
      'bucket',
      'cluster',
      'existing_vpc_id',
      'nat64',
      'nat64_generation',
      'nodegroups',
      'region',
      'vpc_cidr',
    ]);
    expect(text).toContain('"arch": "arm64",\n      "disk_size": 20');
    expect(parseModuleVars(text, 'x', 'demo')).toEqual(vars);
  });

  it('rejects inputs of another cluster and non-inputs', () => {
    expect(() => parseModuleVars(serializeModuleVars(vars), 's3://b/k', 'prod')).toThrow(
      /belong to cluster demo, not prod/,
    );
    expect(() => parseModuleVars('[]', 's3://b/k', 'demo')).toThrow(/not podmin module inputs/);
    expect(() => parseModuleVars('{', 's3://b/k', 'demo')).toThrow(/not valid JSON/);
  });
});
