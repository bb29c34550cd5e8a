import { randomInt } from 'node:crypto';
import {
  AssociateVpcCidrBlockCommand,
  CreateSubnetCommand,
  CreateTagsCommand,
  CreateVpcCommand,
  DeleteSubnetCommand,
  DeleteVpcCommand,
  ModifyVpcAttributeCommand,
  RegisterImageCommand,
  type EC2Client,
} from '@aws-sdk/client-ec2';
import { getAwsEmulator } from '@podmin/testing';
import { decideVpc, latestDebianImage } from '@podmin/cli-util-infra';
import { createEc2Client, Ec2Catalog } from './ec2-catalog';

// moto registers images under its own account; the override stands for Debian's owner.
const OWNER = '123456789012';

describe('Ec2Catalog against the emulator', () => {
  let client: EC2Client;
  let catalog: Ec2Catalog;

  beforeAll(async () => {
    const emulator = await getAwsEmulator();
    client = createEc2Client({
      region: 'us-west-2',
      endpoint: emulator.endpoint,
      credentials: emulator.credentials,
    });
    catalog = new Ec2Catalog(client);
  });

  it('lists the available zones sorted', async () => {
    const zones = await catalog.availableZones();
    expect(zones[0]).toBe('us-west-2a');
    expect(zones).toContain('us-west-2b');
    expect(zones.every((z) => z.startsWith('us-west-2'))).toBe(true);
  });

  it('describes instance types and leaves unknown ones out', async () => {
    const types = await catalog.instanceTypes(['t4g.small', 't3.micro', 'nope.large', 't4g.small']);
    expect(types.get('t4g.small')).toMatchObject({
      architectures: ['arm64'],
      hypervisor: 'nitro',
      ipv6Supported: true,
    });
    expect(types.get('t4g.small')!.maxNetworkInterfaces).toBeGreaterThanOrEqual(2);
    expect(types.get('t3.micro')?.architectures).toContain('x86_64');
    expect(types.has('nope.large')).toBe(false);
  });

  it('finds Debian 13 images by name and owner, and the latest wins', async () => {
    const suffix = Date.now().toString(36);
    await client.send(
      new RegisterImageCommand({
        Name: `debian-13-arm64-2025${suffix}-1`,
        RootDeviceName: '/dev/xvda',
      }),
    );
    const newer = await client.send(
      new RegisterImageCommand({
        Name: `debian-13-arm64-2026${suffix}-2`,
        RootDeviceName: '/dev/xvda',
      }),
    );
    await client.send(
      new RegisterImageCommand({
        Name: `debian-12-arm64-2026${suffix}-3`,
        RootDeviceName: '/dev/xvda',
      }),
    );
    const images = await catalog.debianImages('arm64', OWNER);
    expect(images.every((i) => i.name.startsWith('debian-13-arm64-'))).toBe(true);
    const names = images.map((i) => i.name);
    expect(names).toContain(`debian-13-arm64-2026${suffix}-2`);
    const latest = images.filter((i) => i.name.includes(suffix));
    expect(latestDebianImage(latest, 'arm64')?.imageId).toBe(newer.ImageId);
    expect(await catalog.debianImages('arm64', '136693071363')).toEqual([]);
  });

  it('finds VPCs by exact primary CIDR with DNS attributes, IPv6 blocks and subnets', async () => {
    // The emulator outlives one run: random /24s keep runs apart.
    const [a, b] = [randomInt(100, 250), randomInt(0, 127) * 2];
    const cidr = `10.${a}.${b}.0/24`;
    const otherCidr = `10.${a}.${b + 1}.0/24`;
    const vpc = (await client.send(new CreateVpcCommand({ CidrBlock: cidr }))).Vpc!;
    const other = (await client.send(new CreateVpcCommand({ CidrBlock: otherCidr }))).Vpc!;
    let subnetId: string | undefined;
    try {
      let [facts] = await catalog.vpcsByPrimaryCidr(cidr);
      expect(facts).toMatchObject({
        vpcId: vpc.VpcId,
        dnsHostnames: false,
        ipv6Blocks: [],
        subnets: [],
      });
      expect(() => decideVpc(cidr, 'demo', [facts!], 1)).toThrow(
        /--enable-dns-hostnames[\s\S]*--amazon-provided-ipv6-cidr-block/,
      );

      await client.send(
        new ModifyVpcAttributeCommand({ VpcId: vpc.VpcId, EnableDnsHostnames: { Value: true } }),
      );
      await client.send(
        new ModifyVpcAttributeCommand({ VpcId: vpc.VpcId, EnableDnsSupport: { Value: true } }),
      );
      await client.send(
        new AssociateVpcCidrBlockCommand({ VpcId: vpc.VpcId, AmazonProvidedIpv6CidrBlock: true }),
      );
      subnetId = (
        await client.send(
          new CreateSubnetCommand({ VpcId: vpc.VpcId, CidrBlock: `10.${a}.${b}.0/28` }),
        )
      ).Subnet?.SubnetId;
      await client.send(
        new CreateTagsCommand({
          Resources: [other.VpcId!],
          Tags: [{ Key: 'podmin:cluster', Value: 'x' }],
        }),
      );
      [facts] = await catalog.vpcsByPrimaryCidr(cidr);
      expect(facts!.dnsHostnames).toBe(true);
      expect(facts!.dnsSupport).toBe(true);
      expect(facts!.ipv6Blocks[0]).toMatchObject({ pool: 'Amazon' });
      expect(facts!.ipv6Blocks[0]!.cidr).toMatch(/\/56$/);
      expect(facts!.subnets).toHaveLength(1);
      expect(decideVpc(cidr, 'demo', [facts!], 1)).toEqual({ kind: 'reuse', vpcId: vpc.VpcId });
      expect((await catalog.vpcsByPrimaryCidr(otherCidr))[0]!.tags).toEqual({
        'podmin:cluster': 'x',
      });
      expect(await catalog.vpcsByPrimaryCidr(`10.${a}.${b}.0/25`)).toEqual([]);
    } finally {
      if (subnetId) await client.send(new DeleteSubnetCommand({ SubnetId: subnetId }));
      await client.send(new DeleteVpcCommand({ VpcId: vpc.VpcId })).catch(() => undefined);
      await client.send(new DeleteVpcCommand({ VpcId: other.VpcId })).catch(() => undefined);
    }
  });

  it('reports an unreachable endpoint as SERVICE_UNAVAILABLE', async () => {
    const dead = new Ec2Catalog(
      createEc2Client({
        region: 'us-west-2',
        endpoint: 'http://127.0.0.1:9',
        credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
      }),
    );
    const err = await dead.availableZones().catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      message: expect.stringContaining('ECONNREFUSED'),
    });
  });
});
