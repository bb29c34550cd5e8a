import { ValidationError, hasCode } from '@podmin/util-errors';
import { decideVpc, instanceTypeArch, latestDebianImage, type VpcFacts } from './provider-checks';

describe('instanceTypeArch', () => {
  const good = {
    instanceType: 't4g.small',
    architectures: ['arm64'],
    hypervisor: 'nitro',
    ipv6Supported: true,
    maxNetworkInterfaces: 3,
  };

  it('maps arm64 and x86_64', () => {
    expect(instanceTypeArch(good, 'f')).toEqual({ arch: 'arm64' });
    expect(instanceTypeArch({ ...good, architectures: ['x86_64'] }, 'f')).toEqual({
      arch: 'amd64',
    });
    expect(instanceTypeArch({ ...good, hypervisor: undefined, bareMetal: true }, 'f')).toEqual({
      arch: 'arm64',
    });
  });

  it('lists every unmet requirement', () => {
    const result = instanceTypeArch(
      {
        instanceType: 't2.micro',
        architectures: ['i386'],
        hypervisor: 'xen',
        ipv6Supported: false,
        maxNetworkInterfaces: 1,
      },
      '--nodegroup a instance-type',
    );
    expect('problems' in result && result.problems.map((p) => p.message)).toEqual([
      't2.micro is not a Nitro instance type (hypervisor xen)',
      't2.micro does not support IPv6',
      't2.micro supports 1 network interface(s); at least 2 are required',
      't2.micro has architecture i386; podmin supports arm64 and x86_64',
    ]);
  });
});

describe('latestDebianImage', () => {
  it('picks the newest available image of the architecture', () => {
    const images = [
      {
        imageId: 'ami-old',
        name: 'debian-13-arm64-20250101-1',
        creationDate: '2025-01-01T00:00:00Z',
        state: 'available',
      },
      {
        imageId: 'ami-new',
        name: 'debian-13-arm64-20250601-1',
        creationDate: '2025-06-01T00:00:00Z',
        state: 'available',
      },
      {
        imageId: 'ami-pending',
        name: 'debian-13-arm64-20250701-1',
        creationDate: '2025-07-01T00:00:00Z',
        state: 'pending',
      },
      {
        imageId: 'ami-amd',
        name: 'debian-13-amd64-20250801-1',
        creationDate: '2025-08-01T00:00:00Z',
      },
      {
        imageId: 'ami-wrongarch',
        name: 'debian-13-arm64-20250901-1',
        creationDate: '2025-09-01T00:00:00Z',
        architecture: 'x86_64',
      },
      {
        imageId: 'ami-12',
        name: 'debian-12-arm64-20251001-1',
        creationDate: '2025-10-01T00:00:00Z',
      },
    ];
    expect(latestDebianImage(images, 'arm64')?.imageId).toBe('ami-new');
    expect(latestDebianImage(images, 'amd64')?.imageId).toBe('ami-amd');
    expect(latestDebianImage([], 'amd64')).toBeUndefined();
  });
});

describe('decideVpc', () => {
  const compatible: VpcFacts = {
    vpcId: 'vpc-1',
    cidr: '10.0.0.0/16',
    tags: {},
    dnsSupport: true,
    dnsHostnames: true,
    ipv6Blocks: [{ cidr: '2600:1f14::/56', pool: 'Amazon', state: 'associated' }],
    subnets: [],
  };

  it('creates without a match, reuses one compatible untagged VPC, keeps managing its own', () => {
    expect(decideVpc('10.0.0.0/16', 'demo', [], 2)).toEqual({ kind: 'create' });
    expect(decideVpc('10.0.0.0/16', 'demo', [compatible], 2)).toEqual({
      kind: 'reuse',
      vpcId: 'vpc-1',
    });
    expect(
      decideVpc(
        '10.0.0.0/16',
        'demo',
        [{ ...compatible, tags: { 'podmin:cluster': 'demo' }, dnsHostnames: false }],
        2,
      ),
    ).toEqual({ kind: 'managed', vpcId: 'vpc-1' });
  });

  it('fails on several matches and on a VPC of another cluster', () => {
    expect(() =>
      decideVpc('10.0.0.0/16', 'demo', [compatible, { ...compatible, vpcId: 'vpc-2' }], 1),
    ).toThrow(/2 VPCs have that primary CIDR \(vpc-1, vpc-2\)/);
    expect(() =>
      decideVpc('10.0.0.0/16', 'demo', [{ ...compatible, tags: { 'podmin:cluster': 'prod' } }], 1),
    ).toThrow(/belongs to podmin cluster prod/);
  });

  it('reports every required change of an incompatible VPC', () => {
    let caught: unknown;
    try {
      decideVpc(
        '10.0.0.0/16',
        'demo',
        [{ ...compatible, dnsSupport: false, dnsHostnames: false, ipv6Blocks: [] }],
        1,
      );
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ValidationError);
    expect(hasCode(caught, 'INVALID_ARGUMENT')).toBe(true);
    expect((caught as ValidationError).problems.map((p) => p.message)).toEqual([
      expect.stringContaining('--enable-dns-support'),
      expect.stringContaining('--enable-dns-hostnames'),
      expect.stringContaining('--amazon-provided-ipv6-cidr-block'),
    ]);
  });

  it('counts free /64 ranges, treating this cluster’s own subnets as free', () => {
    const subnet = (i: number, tags: Record<string, string> = {}) => ({
      subnetId: `s-${i}`,
      ipv6Cidrs: [`2600:1f14:0:${i.toString(16)}::/64`],
      tags,
    });
    const full = { ...compatible, subnets: Array.from({ length: 255 }, (_, i) => subnet(i)) };
    expect(() => decideVpc('10.0.0.0/16', 'demo', [full], 2)).toThrow(
      /free 1 more IPv6 \/64 range\(s\): 2 are needed and 1 are free/,
    );
    expect(decideVpc('10.0.0.0/16', 'demo', [full], 1)).toEqual({ kind: 'reuse', vpcId: 'vpc-1' });
    const ours = {
      ...full,
      subnets: [...full.subnets.slice(1), subnet(300, { 'podmin:cluster': 'demo' })],
    };
    expect(decideVpc('10.0.0.0/16', 'demo', [ours], 2)).toEqual({ kind: 'reuse', vpcId: 'vpc-1' });
  });
});
