import type { FieldProblem } from '@podmin/util-errors';
import { DNS1123_LABEL_RULE, isDns1123Label } from '@podmin/util-manifest';

/** NodeGroup defaults of the spec (AWS). */
export const NODEGROUP_DEFAULTS = {
  size: 1,
  diskSize: 20,
  instanceType: 't4g.small',
} as const;
/** Root volume size bounds (GiB) of a NodeGroup: GP3's limits. */
export const DISK_SIZE_RANGE = { min: 8, max: 16384 } as const;
/** Bounds of a NodeGroup's Auto Scaling Group size. */
export const SIZE_RANGE = { min: 0, max: 1000 } as const;

const NODEGROUP_KEYS = ['size', 'disk-size', 'instance-type', 'zone', 'nat64'] as const;
type NodeGroupKey = (typeof NODEGROUP_KEYS)[number];

/** One `--nodegroup` value after syntax validation; the zone is resolved against the region later. */
export interface NodeGroupRequest {
  name: string;
  size: number;
  diskSize: number;
  instanceType: string;
  /** Full zone name or one lowercase suffix letter; absent means the first available zone. */
  zone?: string;
  /** Instance type of a dedicated NAT64 instance for this NodeGroup. */
  nat64?: string;
}

const INSTANCE_TYPE = /^[a-z][a-z0-9-]*\.[a-z0-9-]+$/;
const ZONE_SUFFIX = /^[a-z]$/;
const ZONE_NAME = /^[a-z]{2}(?:-[a-z0-9]+)+[a-z]$/;
const INTEGER = /^(?:0|[1-9]\d*)$/;

function parseInteger(text: string, range: { min: number; max: number }): number | undefined {
  if (!INTEGER.test(text) || text.length > 6) return undefined;
  const n = Number(text);
  return n >= range.min && n <= range.max ? n : undefined;
}

/** Checks an instance type's syntax (the provider API checks that it exists). */
export function isInstanceTypeName(value: string): boolean {
  return INSTANCE_TYPE.test(value) && value.length <= 64;
}

/** Parses one `--nodegroup NAME[,key=value…]`, pushing every problem it finds. */
export function parseNodeGroup(
  value: string,
  index: number,
  problems: FieldProblem[],
): NodeGroupRequest | undefined {
  const field = `--nodegroup[${index}]`;
  const [name = '', ...pairs] = value.split(',');
  const before = problems.length;
  if (!isDns1123Label(name)) {
    problems.push({
      field,
      message: `NodeGroup name ${JSON.stringify(name)} is invalid; it must be ${DNS1123_LABEL_RULE}`,
    });
  }
  const seen = new Set<string>();
  const group: NodeGroupRequest = {
    name,
    size: NODEGROUP_DEFAULTS.size,
    diskSize: NODEGROUP_DEFAULTS.diskSize,
    instanceType: NODEGROUP_DEFAULTS.instanceType,
  };
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    const key = eq === -1 ? pair : pair.slice(0, eq);
    const text = eq === -1 ? undefined : pair.slice(eq + 1);
    const at = `${field} ${name} ${key}`;
    if (!(NODEGROUP_KEYS as readonly string[]).includes(key)) {
      problems.push({
        field: `${field} ${name}`,
        message: `unknown key ${JSON.stringify(key)}; allowed: ${NODEGROUP_KEYS.join(', ')} (as key=value)`,
      });
      continue;
    }
    if (seen.has(key)) {
      problems.push({ field: at, message: `${key} is given more than once` });
      continue;
    }
    seen.add(key);
    if (text === undefined || text === '') {
      problems.push({ field: at, message: `${key} needs a value (${key}=…)` });
      continue;
    }
    applyNodeGroupKey(group, key as NodeGroupKey, text, at, problems);
  }
  return problems.length === before ? group : undefined;
}

function applyNodeGroupKey(
  group: NodeGroupRequest,
  key: NodeGroupKey,
  text: string,
  field: string,
  problems: FieldProblem[],
): void {
  switch (key) {
    case 'size': {
      const n = parseInteger(text, SIZE_RANGE);
      if (n === undefined) {
        problems.push({
          field,
          message: `${JSON.stringify(text)} is not an integer from ${SIZE_RANGE.min} through ${SIZE_RANGE.max}`,
        });
      } else group.size = n;
      return;
    }
    case 'disk-size': {
      const n = parseInteger(text, DISK_SIZE_RANGE);
      if (n === undefined) {
        problems.push({
          field,
          message: `${JSON.stringify(text)} is not an integer number of GiB from ${DISK_SIZE_RANGE.min} through ${DISK_SIZE_RANGE.max}`,
        });
      } else group.diskSize = n;
      return;
    }
    case 'instance-type':
    case 'nat64':
      if (!isInstanceTypeName(text)) {
        problems.push({
          field,
          message: `${JSON.stringify(text)} is not an EC2 instance type such as t4g.small`,
        });
      } else if (key === 'nat64') group.nat64 = text;
      else group.instanceType = text;
      return;
    case 'zone':
      if (!ZONE_SUFFIX.test(text) && !ZONE_NAME.test(text)) {
        problems.push({
          field,
          message: `${JSON.stringify(text)} is neither a zone name such as us-west-2b nor one lowercase zone letter such as b`,
        });
      } else group.zone = text;
      return;
  }
}

/**
 * Resolves a NodeGroup zone against the region: a suffix letter becomes `<region><letter>`, a
 * full name must belong to the region. Returns undefined for a zone of another region.
 */
export function resolveZoneName(zone: string, region: string): string | undefined {
  if (ZONE_SUFFIX.test(zone)) return `${region}${zone}`;
  return zone.startsWith(region) ? zone : undefined;
}
