import { PodminError, ValidationError, type FieldProblem } from '@podmin/util-errors';
import type { Arch } from '@podmin/util-dependencies';

/** The owner of the official Debian AMIs. */
export const DEBIAN_AMI_OWNER = '136693071363';
/** A podmin tag key on every resource the module creates. */
export const CLUSTER_TAG = 'podmin:cluster';

/** What the provider API says about an instance type. */
export interface InstanceTypeFacts {
  instanceType: string;
  architectures: readonly string[];
  hypervisor?: string;
  /** EC2 reports bare-metal types as not virtualized; they are Nitro systems too. */
  bareMetal?: boolean;
  ipv6Supported: boolean;
  maxNetworkInterfaces: number;
}

/**
 * Checks that an instance type is Nitro, supports IPv6 and at least two network interfaces,
 * and maps its architecture (arm64 → arm64, x86_64 → amd64). Returns the architecture or the
 * problems found.
 */
export function instanceTypeArch(
  facts: InstanceTypeFacts,
  field: string,
): { arch: Arch } | { problems: FieldProblem[] } {
  const problems: FieldProblem[] = [];
  const name = facts.instanceType;
  if (facts.hypervisor !== 'nitro' && facts.bareMetal !== true) {
    problems.push({
      field,
      message: `${name} is not a Nitro instance type (hypervisor ${facts.hypervisor ?? 'unknown'})`,
    });
  }
  if (!facts.ipv6Supported) problems.push({ field, message: `${name} does not support IPv6` });
  if (facts.maxNetworkInterfaces < 2) {
    problems.push({
      field,
      message: `${name} supports ${facts.maxNetworkInterfaces} network interface(s); at least 2 are required`,
    });
  }
  let arch: Arch | undefined;
  if (facts.architectures.includes('arm64')) arch = 'arm64';
  else if (facts.architectures.includes('x86_64')) arch = 'amd64';
  else {
    problems.push({
      field,
      message: `${name} has architecture ${facts.architectures.join('/') || 'unknown'}; podmin supports arm64 and x86_64`,
    });
  }
  return problems.length > 0 || arch === undefined ? { problems } : { arch };
}

/** The EC2 architecture name of a podmin architecture. */
export function ec2Architecture(arch: Arch): 'arm64' | 'x86_64' {
  return arch === 'arm64' ? 'arm64' : 'x86_64';
}

/** An AMI as the provider API describes it. */
export interface ImageFacts {
  imageId: string;
  name: string;
  architecture?: string;
  creationDate?: string;
  state?: string;
}

/** The AMI name pattern of Debian 13 for an architecture. */
export function debianImagePattern(arch: Arch): string {
  return `debian-13-${arch}-*`;
}

/**
 * Picks the latest available Debian 13 image of `arch` (by creation date, then name), ignoring
 * images of other names, states or architectures. Undefined when none fits.
 */
export function latestDebianImage(
  images: readonly ImageFacts[],
  arch: Arch,
): ImageFacts | undefined {
  const prefix = `debian-13-${arch}-`;
  return images
    .filter(
      (i) =>
        i.name.startsWith(prefix) &&
        (i.state === undefined || i.state === 'available') &&
        (i.architecture === undefined || i.architecture === ec2Architecture(arch)),
    )
    .sort(
      (a, b) =>
        (b.creationDate ?? '').localeCompare(a.creationDate ?? '') || b.name.localeCompare(a.name),
    )[0];
}

/** What the provider API says about a VPC whose primary CIDR matched. */
export interface VpcFacts {
  vpcId: string;
  cidr: string;
  tags: Readonly<Record<string, string>>;
  dnsSupport: boolean;
  dnsHostnames: boolean;
  ipv6Blocks: ReadonlyArray<{ cidr: string; pool?: string; state?: string }>;
  /** Every subnet of the VPC: its IPv6 CIDRs and tags. */
  subnets: ReadonlyArray<{
    subnetId: string;
    ipv6Cidrs: readonly string[];
    tags: Readonly<Record<string, string>>;
  }>;
}

/** What setup does about the VPC. */
export type VpcDecision =
  | { kind: 'create' }
  /** A VPC podmin created for this cluster earlier; the module keeps managing it. */
  | { kind: 'managed'; vpcId: string }
  /** An untagged compatible VPC that the module uses and never deletes. */
  | { kind: 'reuse'; vpcId: string };

/**
 * Decides about the VPC from the VPCs whose primary CIDR equals `cidr`: none → create; one
 * tagged for this cluster → keep managing it; one untagged and compatible → reuse; anything
 * else fails, and an incompatible one fails listing every required change.
 */
export function decideVpc(
  cidr: string,
  cluster: string,
  matches: readonly VpcFacts[],
  needed64s: number,
): VpcDecision {
  if (matches.length === 0) return { kind: 'create' };
  if (matches.length > 1) {
    throw new PodminError(
      'INVALID_ARGUMENT',
      `choosing the VPC for ${cidr}: ${matches.length} VPCs have that primary CIDR (${matches.map((v) => v.vpcId).join(', ')})`,
      {
        hint: 'podmin reuses only a unique match; choose another --vpc-cidr or remove the extra VPCs',
      },
    );
  }
  const vpc = matches[0] as VpcFacts;
  const owner = vpc.tags[CLUSTER_TAG];
  if (owner === cluster) return { kind: 'managed', vpcId: vpc.vpcId };
  if (owner !== undefined) {
    throw new PodminError(
      'INVALID_ARGUMENT',
      `choosing the VPC for ${cidr}: ${vpc.vpcId} belongs to podmin cluster ${owner}`,
      { hint: 'choose another --vpc-cidr' },
    );
  }
  const changes: FieldProblem[] = [];
  const field = vpc.vpcId;
  if (!vpc.dnsSupport) {
    changes.push({
      field,
      message: `enable DNS support (aws ec2 modify-vpc-attribute --vpc-id ${vpc.vpcId} --enable-dns-support)`,
    });
  }
  if (!vpc.dnsHostnames) {
    changes.push({
      field,
      message: `enable DNS hostnames (aws ec2 modify-vpc-attribute --vpc-id ${vpc.vpcId} --enable-dns-hostnames)`,
    });
  }
  const amazon = vpc.ipv6Blocks.filter(
    (b) =>
      b.pool === 'Amazon' && b.cidr.endsWith('/56') && (b.state ?? 'associated') === 'associated',
  );
  if (amazon.length === 0) {
    changes.push({
      field,
      message: `associate an Amazon-provided IPv6 /56 (aws ec2 associate-vpc-cidr-block --vpc-id ${vpc.vpcId} --amazon-provided-ipv6-cidr-block)`,
    });
  } else {
    const used = vpc.subnets.filter(
      (s) => s.tags[CLUSTER_TAG] !== cluster && s.ipv6Cidrs.length > 0,
    ).length;
    const free = 256 * amazon.length - used;
    if (free < needed64s) {
      changes.push({
        field,
        message: `free ${needed64s - free} more IPv6 /64 range(s): ${needed64s} are needed and ${free} are free`,
      });
    }
  }
  if (changes.length > 0) {
    throw new ValidationError(
      `reusing ${vpc.vpcId} (primary CIDR ${cidr}) needs these changes first`,
      changes,
      {
        code: 'INVALID_ARGUMENT',
        hint: 'make the changes and run setup again, or choose a --vpc-cidr no VPC uses so podmin creates one',
      },
    );
  }
  return { kind: 'reuse', vpcId: vpc.vpcId };
}
