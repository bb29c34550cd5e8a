import {
  DescribeAvailabilityZonesCommand,
  DescribeImagesCommand,
  DescribeInstanceTypesCommand,
  DescribeSubnetsCommand,
  DescribeVpcAttributeCommand,
  DescribeVpcsCommand,
  EC2Client,
  type Tag,
  type _InstanceType,
} from '@aws-sdk/client-ec2';
import type { Arch } from '@podmin/util-dependencies';
import {
  debianImagePattern,
  type ImageFacts,
  type InstanceTypeFacts,
  type VpcFacts,
} from '@podmin/cli-util-infra';
import { translateEc2Error } from './ec2-errors';

/** How to build an EC2 client for a context. */
export interface Ec2ClientOptions {
  region: string;
  profile?: string;
  /** Custom endpoint (an emulator): AWS_ENDPOINT_URL_EC2, else AWS_ENDPOINT_URL. */
  endpoint?: string;
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

/** Creates an EC2 client; credentials from the SDK's default chain unless given. */
export function createEc2Client(options: Ec2ClientOptions): EC2Client {
  return new EC2Client({
    region: options.region,
    ...(options.profile === undefined ? {} : { profile: options.profile }),
    ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
    ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
  });
}

function tagMap(tags: readonly Tag[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const t of tags ?? []) if (t.Key !== undefined) out[t.Key] = t.Value ?? '';
  return out;
}

/** The read-only EC2 questions setup asks before the engine runs. */
export class Ec2Catalog {
  constructor(private readonly client: EC2Client) {}

  /** Names of the region's available zones (not Local or Wavelength Zones), sorted. */
  async availableZones(): Promise<string[]> {
    const out = await this.call('listing availability zones', () =>
      this.client.send(
        new DescribeAvailabilityZonesCommand({
          Filters: [{ Name: 'state', Values: ['available'] }],
        }),
      ),
    );
    return (out.AvailabilityZones ?? [])
      .filter(
        (z) =>
          z.ZoneName !== undefined &&
          (z.ZoneType === undefined || z.ZoneType === 'availability-zone'),
      )
      .map((z) => z.ZoneName as string)
      .sort();
  }

  /**
   * What EC2 reports about each instance type; a name EC2 does not know is absent from the
   * result (asked one by one after EC2 rejects the batch, to find which).
   */
  async instanceTypes(names: readonly string[]): Promise<Map<string, InstanceTypeFacts>> {
    const unique = [...new Set(names)].sort();
    const result = new Map<string, InstanceTypeFacts>();
    if (unique.length === 0) return result;
    try {
      for (const facts of await this.describeTypes(unique)) result.set(facts.instanceType, facts);
      return result;
    } catch (err) {
      if ((err as { name?: unknown }).name !== 'InvalidInstanceType') {
        throw translateEc2Error(err, `describing instance types ${unique.join(', ')}`);
      }
    }
    for (const name of unique) {
      try {
        for (const facts of await this.describeTypes([name])) result.set(facts.instanceType, facts);
      } catch (err) {
        if ((err as { name?: unknown }).name !== 'InvalidInstanceType') {
          throw translateEc2Error(err, `describing instance type ${name}`);
        }
      }
    }
    return result;
  }

  /** Debian 13 images of `arch` published by `owner`. */
  async debianImages(arch: Arch, owner: string): Promise<ImageFacts[]> {
    const out = await this.call(`listing Debian 13 ${arch} images of owner ${owner}`, () =>
      this.client.send(
        new DescribeImagesCommand({
          Owners: [owner],
          Filters: [{ Name: 'name', Values: [debianImagePattern(arch)] }],
        }),
      ),
    );
    return (out.Images ?? [])
      .filter((i) => i.ImageId !== undefined && i.Name !== undefined)
      .map((i) => ({
        imageId: i.ImageId as string,
        name: i.Name as string,
        ...(i.Architecture === undefined ? {} : { architecture: i.Architecture }),
        ...(i.CreationDate === undefined ? {} : { creationDate: i.CreationDate }),
        ...(i.State === undefined ? {} : { state: i.State }),
      }));
  }

  /** VPCs whose primary IPv4 CIDR is exactly `cidr`, with their DNS attributes and subnets. */
  async vpcsByPrimaryCidr(cidr: string): Promise<VpcFacts[]> {
    const out = await this.call(`looking up VPCs with primary CIDR ${cidr}`, () =>
      this.client.send(new DescribeVpcsCommand({ Filters: [{ Name: 'cidr', Values: [cidr] }] })),
    );
    const vpcs = (out.Vpcs ?? []).filter((v) => v.CidrBlock === cidr && v.VpcId !== undefined);
    const facts: VpcFacts[] = [];
    for (const vpc of vpcs) {
      const id = vpc.VpcId as string;
      const [support, hostnames, subnets] = await Promise.all([
        this.call(`reading DNS support of ${id}`, () =>
          this.client.send(
            new DescribeVpcAttributeCommand({ VpcId: id, Attribute: 'enableDnsSupport' }),
          ),
        ),
        this.call(`reading DNS hostnames of ${id}`, () =>
          this.client.send(
            new DescribeVpcAttributeCommand({ VpcId: id, Attribute: 'enableDnsHostnames' }),
          ),
        ),
        this.call(`listing subnets of ${id}`, () =>
          this.client.send(
            new DescribeSubnetsCommand({ Filters: [{ Name: 'vpc-id', Values: [id] }] }),
          ),
        ),
      ]);
      facts.push({
        vpcId: id,
        cidr,
        tags: tagMap(vpc.Tags),
        dnsSupport: support.EnableDnsSupport?.Value === true,
        dnsHostnames: hostnames.EnableDnsHostnames?.Value === true,
        ipv6Blocks: (vpc.Ipv6CidrBlockAssociationSet ?? [])
          .filter((b) => b.Ipv6CidrBlock !== undefined)
          .map((b) => ({
            cidr: b.Ipv6CidrBlock as string,
            ...(b.Ipv6Pool === undefined ? {} : { pool: b.Ipv6Pool }),
            ...(b.Ipv6CidrBlockState?.State === undefined
              ? {}
              : { state: b.Ipv6CidrBlockState.State }),
          })),
        subnets: (subnets.Subnets ?? []).map((s) => ({
          subnetId: s.SubnetId ?? '',
          ipv6Cidrs: (s.Ipv6CidrBlockAssociationSet ?? [])
            .filter((a) => a.Ipv6CidrBlockState?.State !== 'disassociated')
            .map((a) => a.Ipv6CidrBlock ?? '')
            .filter((c) => c !== ''),
          tags: tagMap(s.Tags),
        })),
      });
    }
    return facts;
  }

  private async describeTypes(names: readonly string[]): Promise<InstanceTypeFacts[]> {
    const out = await this.client.send(
      new DescribeInstanceTypesCommand({ InstanceTypes: names as _InstanceType[] }),
    );
    return (out.InstanceTypes ?? [])
      .filter((t) => t.InstanceType !== undefined)
      .map((t) => ({
        instanceType: t.InstanceType as string,
        architectures: t.ProcessorInfo?.SupportedArchitectures ?? [],
        ...(t.Hypervisor === undefined ? {} : { hypervisor: t.Hypervisor }),
        ...(t.BareMetal === undefined ? {} : { bareMetal: t.BareMetal }),
        ipv6Supported: t.NetworkInfo?.Ipv6Supported === true,
        maxNetworkInterfaces: t.NetworkInfo?.MaximumNetworkInterfaces ?? 0,
      }));
  }

  private async call<T>(doing: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw translateEc2Error(err, doing);
    }
  }
}
