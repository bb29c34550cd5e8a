import { ValidationError, type FieldProblem } from '@podmin/util-errors';
import { DNS1123_LABEL_RULE, isDns1123Label } from '@podmin/util-manifest';
import { parseS3ObjectUrl } from '@podmin/util-names';

/** NodeGroup defaults of the spec (AWS). */
export const NODEGROUP_DEFAULTS = {
  size: 1,
  diskSize: 20,
  instanceType: 't4g.small',
} as const;
/** Instance type of the shared NAT64 instances when `--nat64` is given bare. */
export const DEFAULT_NAT64_INSTANCE_TYPE = 't4g.nano';
/** Root volume size bounds (GiB) of a NodeGroup: GP3's limits. */
export const DISK_SIZE_RANGE = { min: 8, max: 16384 } as const;
/** Bounds of a NodeGroup's Auto Scaling Group size. */
export const SIZE_RANGE = { min: 0, max: 1000 } as const;
/** Prefix lengths AWS accepts for a VPC's primary IPv4 CIDR. */
export const VPC_PREFIX_RANGE = { min: 16, max: 28 } as const;

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

/** Everything `setup --vpc-cidr … --nodegroup … [--nat64]` asks for, validated. */
export interface SetupRequest {
  /** The canonical network address of the VPC's primary IPv4 CIDR. */
  vpcCidr: string;
  /** NodeGroups in the order given. */
  nodegroups: NodeGroupRequest[];
  /** The shared NAT64 instance type, when `--nat64` was given. */
  nat64?: { instanceType: string };
  /** The exact object `--workload-ca-publish s3://BUCKET/KEY` names, when given. */
  workloadCaPublish?: WorkloadCaPublish;
  /** Container log export (`--otel-logs`), when given; absent: Fluent Bit is not installed. */
  otelLogs?: OtelLogsConfig;
}

/** The OTLP transports `--otel-logs protocol=` accepts; `http` (OTLP/HTTP protobuf) is the default. */
export const OTEL_LOGS_PROTOCOLS = ['http', 'grpc'] as const;
/** One OTLP transport. */
export type OtelLogsProtocol = (typeof OTEL_LOGS_PROTOCOLS)[number];
/** The keys of `--otel-logs`, as the spec names them. */
export const OTEL_LOGS_KEYS = ['endpoint', 'protocol', 'mtls', 'ca', 'headers-secret'] as const;

/** `setup --otel-logs endpoint=URL[,protocol=…][,mtls=…][,ca=…][,headers-secret=…]`, validated. */
export interface OtelLogsConfig {
  /** The exact https URL the exporter sends to (the signal URL for OTLP/HTTP). */
  endpoint: string;
  protocol: OtelLogsProtocol;
  /** Whether Fluent Bit presents the agent-issued client-only telemetry leaf. */
  mtls: boolean;
  /** The exact S3 object holding the private server CA bundle; absent: the OS trust store. */
  ca?: { bucket: string; key: string; url: string };
  /** Whether exporter headers are read from the `otel-logs-headers` system secret at each start. */
  headersSecret: boolean;
}

/** The one external S3 object the leader keeps the workload CA bundle at. */
export interface WorkloadCaPublish {
  bucket: string;
  key: string;
  /** The flag's `s3://BUCKET/KEY`, as the agent takes it. */
  url: string;
}

/** The raw flag values as the command line gave them. */
export interface SetupFlags {
  vpcCidr?: string;
  nodegroup?: readonly string[];
  /** `''` for a bare `--nat64`, `instance-type=T` otherwise; undefined when absent. */
  nat64?: string;
  /** `--workload-ca-publish`, undefined when absent. */
  workloadCaPublish?: string;
  /** `--otel-logs`, undefined when absent. */
  otelLogs?: string;
}

// The key becomes an exact IAM and endpoint policy ARN (where * and ? are wildcards and ${…} a
// policy variable) and a single-quoted shell value and systemd environment entry in user data:
// S3's safe characters without those, in /-separated segments.
const PUBLISH_KEY_SEGMENT = /^[A-Za-z0-9!_.()-]+$/;
const PUBLISH_KEY_MAX = 1024;

/**
 * Parses `--workload-ca-publish s3://BUCKET/KEY` for AWS: a valid bucket name and a key of
 * `/`-separated segments of `[A-Za-z0-9!_.()-]`, none empty, `.` or `..`. Returns the
 * location, or the problem naming the flag and what is allowed.
 */
export function parseWorkloadCaPublish(url: string): WorkloadCaPublish | FieldProblem {
  return parseExactObject(url, '--workload-ca-publish');
}

/**
 * One exact S3 object `s3://BUCKET/KEY` that becomes an exact IAM resource and a quoted
 * user-data value: what `--workload-ca-publish` and `--otel-logs ca=` accept.
 */
function parseExactObject(url: string, field: string): WorkloadCaPublish | FieldProblem {
  const parsed = parseS3ObjectUrl(url);
  if (parsed === undefined) {
    return {
      field,
      message: `${JSON.stringify(url)} is not s3://BUCKET/KEY with a valid S3 bucket name and a non-empty key`,
    };
  }
  const segments = parsed.key.split('/');
  if (
    parsed.key.length > PUBLISH_KEY_MAX ||
    !segments.every((s) => PUBLISH_KEY_SEGMENT.test(s) && s !== '.' && s !== '..')
  ) {
    return {
      field,
      message: `${JSON.stringify(url)}: the key must be at most ${PUBLISH_KEY_MAX} characters of A-Z, a-z, 0-9 and !_.()- in /-separated segments, none empty, . or .. (no *, ?, $ or quotes: it becomes an exact IAM resource)`,
    };
  }
  return { ...parsed, url };
}

const INSTANCE_TYPE = /^[a-z][a-z0-9-]*\.[a-z0-9-]+$/;
const ZONE_SUFFIX = /^[a-z]$/;
const ZONE_NAME = /^[a-z]{2}(?:-[a-z0-9]+)+[a-z]$/;
const OCTET = /^(?:0|[1-9]\d{0,2})$/;
const INTEGER = /^(?:0|[1-9]\d*)$/;

const PRIVATE_RANGES: ReadonlyArray<{ base: number; prefix: number; text: string }> = [
  { base: ipv4(10, 0, 0, 0), prefix: 8, text: '10.0.0.0/8' },
  { base: ipv4(172, 16, 0, 0), prefix: 12, text: '172.16.0.0/12' },
  { base: ipv4(192, 168, 0, 0), prefix: 16, text: '192.168.0.0/16' },
];

function ipv4(a: number, b: number, c: number, d: number): number {
  return ((a << 24) >>> 0) + (b << 16) + (c << 8) + d;
}

function mask(prefix: number): number {
  return prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
}

function formatIpv4(value: number): string {
  return [24, 16, 8, 0].map((shift) => (value >>> shift) & 0xff).join('.');
}

/**
 * Checks a `--vpc-cidr` value: a private IPv4 network (inside 10.0.0.0/8, 172.16.0.0/12 or
 * 192.168.0.0/16) with a /16 to /28 prefix, written as its network address. Returns the
 * problems found (empty when valid).
 */
export function vpcCidrProblems(value: string): FieldProblem[] {
  const field = '--vpc-cidr';
  const allowed = `a private IPv4 CIDR inside ${PRIVATE_RANGES.map((r) => r.text).join(', ')} with a prefix from /${VPC_PREFIX_RANGE.min} to /${VPC_PREFIX_RANGE.max}, e.g. 10.0.0.0/16`;
  const [address, prefixText, ...rest] = value.split('/');
  const octets = (address ?? '').split('.');
  if (
    rest.length > 0 ||
    prefixText === undefined ||
    !INTEGER.test(prefixText) ||
    octets.length !== 4 ||
    !octets.every((o) => OCTET.test(o) && Number(o) <= 255)
  ) {
    return [{ field, message: `${JSON.stringify(value)} is not ${allowed}` }];
  }
  const prefix = Number(prefixText);
  const [a, b, c, d] = octets.map(Number) as [number, number, number, number];
  const base = ipv4(a, b, c, d);
  if (prefix < VPC_PREFIX_RANGE.min || prefix > VPC_PREFIX_RANGE.max) {
    return [
      {
        field,
        message: `${JSON.stringify(value)} has prefix /${prefix}; AWS allows /${VPC_PREFIX_RANGE.min} to /${VPC_PREFIX_RANGE.max}`,
      },
    ];
  }
  const network = (base & mask(prefix)) >>> 0;
  if (network !== base) {
    return [
      {
        field,
        message: `${JSON.stringify(value)} has host bits set; write the network address ${formatIpv4(network)}/${prefix}`,
      },
    ];
  }
  const inside = PRIVATE_RANGES.some(
    (r) => prefix >= r.prefix && (base & mask(r.prefix)) >>> 0 === r.base,
  );
  if (!inside) {
    return [{ field, message: `${JSON.stringify(value)} is not private; it must be ${allowed}` }];
  }
  return [];
}

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
function parseNodeGroup(
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

/** Parses `--nat64`: bare (`''`) means the default type, `instance-type=T` sets it. */
function parseNat64(value: string, problems: FieldProblem[]): { instanceType: string } | undefined {
  if (value === '') return { instanceType: DEFAULT_NAT64_INSTANCE_TYPE };
  const match = /^instance-type=(.*)$/.exec(value);
  if (match === null) {
    problems.push({
      field: '--nat64',
      message: `${JSON.stringify(value)} is not allowed; give --nat64 alone (${DEFAULT_NAT64_INSTANCE_TYPE}) or --nat64=instance-type=TYPE`,
    });
    return undefined;
  }
  const type = match[1] ?? '';
  if (!isInstanceTypeName(type)) {
    problems.push({
      field: '--nat64',
      message: `instance-type ${JSON.stringify(type)} is not an EC2 instance type such as t4g.nano`,
    });
    return undefined;
  }
  return { instanceType: type };
}

const OTEL_ENDPOINT_MAX = 2048;
// The URL becomes a single-quoted user-data value and a Fluent Bit configuration value.
const OTEL_ENDPOINT_TEXT = /^[\x21-\x7e]+$/;
const OTEL_ENDPOINT_FORBIDDEN = /['"`$\\]/;

/**
 * Parses `--otel-logs endpoint=URL[,protocol=http|grpc][,mtls=true|false][,ca=s3://B/K]
 * [,headers-secret=true|false]`: comma-separated `key=value` pairs, each key at most once;
 * `endpoint` required and an https URL without credentials or fragment (OTLP/gRPC: no path or
 * query, the service path is fixed); booleans exactly `true` or `false`; `ca` one exact S3
 * object. Returns the configuration, or every problem, each naming its key and what is allowed.
 */
export function parseOtelLogs(value: string): OtelLogsConfig | FieldProblem[] {
  const problems: FieldProblem[] = [];
  const at = (key: string) => `--otel-logs ${key}`;
  const given = new Map<string, string>();
  for (const pair of value.split(',')) {
    const eq = pair.indexOf('=');
    const key = eq === -1 ? pair : pair.slice(0, eq);
    const text = eq === -1 ? undefined : pair.slice(eq + 1);
    if (!(OTEL_LOGS_KEYS as readonly string[]).includes(key)) {
      problems.push({
        field: '--otel-logs',
        message: `unknown key ${JSON.stringify(key)}; allowed: ${OTEL_LOGS_KEYS.join(', ')} (as key=value, comma-separated)`,
      });
      continue;
    }
    if (given.has(key)) {
      problems.push({ field: at(key), message: `${key} is given more than once` });
      continue;
    }
    if (text === undefined || text === '') {
      problems.push({ field: at(key), message: `${key} needs a value (${key}=…)` });
      continue;
    }
    given.set(key, text);
  }
  const bool = (key: string): boolean | undefined => {
    const text = given.get(key);
    if (text === undefined) return false;
    if (text === 'true' || text === 'false') return text === 'true';
    problems.push({
      field: at(key),
      message: `${JSON.stringify(text)} is not allowed; use true or false`,
    });
    return undefined;
  };
  const protocolText = given.get('protocol') ?? 'http';
  const protocol = (OTEL_LOGS_PROTOCOLS as readonly string[]).includes(protocolText)
    ? (protocolText as OtelLogsProtocol)
    : undefined;
  if (protocol === undefined) {
    problems.push({
      field: at('protocol'),
      message: `${JSON.stringify(protocolText)} is not allowed; use http (OTLP/HTTP protobuf, the default) or grpc (OTLP/gRPC)`,
    });
  }
  const mtls = bool('mtls');
  const headersSecret = bool('headers-secret');
  let ca: WorkloadCaPublish | undefined;
  const caText = given.get('ca');
  if (caText !== undefined) {
    const parsed = parseExactObject(caText, at('ca'));
    if ('field' in parsed) problems.push(parsed);
    else ca = parsed;
  }
  const endpoint = given.get('endpoint');
  if (endpoint === undefined) {
    if (!problems.some((p) => p.field === at('endpoint'))) {
      problems.push({
        field: at('endpoint'),
        message:
          'is required: the exact https URL logs are exported to, e.g. endpoint=https://otlp.example.com/v1/logs',
      });
    }
  } else {
    const problem = otelEndpointProblem(endpoint, protocol ?? 'http');
    if (problem !== undefined) problems.push({ field: at('endpoint'), message: problem });
  }
  if (problems.length > 0 || endpoint === undefined || protocol === undefined) return problems;
  return {
    endpoint,
    protocol,
    mtls: mtls === true,
    ...(ca === undefined ? {} : { ca }),
    headersSecret: headersSecret === true,
  };
}

function otelEndpointProblem(endpoint: string, protocol: OtelLogsProtocol): string | undefined {
  const quoted = JSON.stringify(endpoint);
  if (
    endpoint.length > OTEL_ENDPOINT_MAX ||
    !OTEL_ENDPOINT_TEXT.test(endpoint) ||
    OTEL_ENDPOINT_FORBIDDEN.test(endpoint)
  ) {
    return `${quoted} must be at most ${OTEL_ENDPOINT_MAX} printable ASCII characters without spaces, quotes, backslashes or $ (percent-encode them)`;
  }
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return `${quoted} is not a URL; give the exact https URL, e.g. https://otlp.example.com/v1/logs`;
  }
  if (url.protocol !== 'https:') {
    return `${quoted} is not an https:// URL; TLS with certificate and hostname verification is mandatory`;
  }
  if (url.hostname === '') return `${quoted} has no host`;
  if (url.username !== '' || url.password !== '') {
    return `${quoted} carries credentials; store exporter headers with \`podmin secret create otel-logs-headers --system\` and set headers-secret=true`;
  }
  if (endpoint.includes('#')) return `${quoted} has a fragment; OTLP sends none`;
  if (protocol === 'grpc' && (url.pathname !== '/' || url.search !== '')) {
    return `${quoted} has a path or query; an OTLP/gRPC endpoint is https://HOST[:PORT] (the service path is fixed)`;
  }
  return undefined;
}

/**
 * Validates setup's flags before anything runs. Throws one ValidationError (INVALID_ARGUMENT)
 * listing every bad value, each naming its flag and what is allowed.
 */
export function parseSetupFlags(flags: SetupFlags): SetupRequest {
  const problems: FieldProblem[] = [];
  const cidr = flags.vpcCidr;
  if (cidr === undefined || cidr === '') {
    problems.push({ field: '--vpc-cidr', message: 'is required, e.g. --vpc-cidr 10.0.0.0/16' });
  } else {
    problems.push(...vpcCidrProblems(cidr));
  }
  const values = flags.nodegroup ?? [];
  if (values.length === 0) {
    problems.push({
      field: '--nodegroup',
      message: 'at least one is required, e.g. --nodegroup default (the list is authoritative)',
    });
  }
  const nodegroups: NodeGroupRequest[] = [];
  const names = new Set<string>();
  values.forEach((value, index) => {
    const name = value.split(',')[0] ?? '';
    if (names.has(name)) {
      problems.push({
        field: `--nodegroup[${index}]`,
        message: `NodeGroup ${name} is given more than once; each name may appear once`,
      });
    }
    names.add(name);
    const group = parseNodeGroup(value, index, problems);
    if (group !== undefined) nodegroups.push(group);
  });
  const nat64 = flags.nat64 === undefined ? undefined : parseNat64(flags.nat64, problems);
  let workloadCaPublish: WorkloadCaPublish | undefined;
  if (flags.workloadCaPublish !== undefined) {
    const publish = parseWorkloadCaPublish(flags.workloadCaPublish);
    if ('field' in publish) problems.push(publish);
    else workloadCaPublish = publish;
  }
  let otelLogs: OtelLogsConfig | undefined;
  if (flags.otelLogs !== undefined) {
    const parsed = parseOtelLogs(flags.otelLogs);
    if (Array.isArray(parsed)) problems.push(...parsed);
    else otelLogs = parsed;
  }
  if (problems.length > 0) {
    throw new ValidationError('checking setup flags', problems, {
      code: 'INVALID_ARGUMENT',
      hint: 'see `podmin setup --help`',
    });
  }
  return {
    vpcCidr: cidr as string,
    nodegroups,
    ...(nat64 === undefined ? {} : { nat64 }),
    ...(workloadCaPublish === undefined ? {} : { workloadCaPublish }),
    ...(otelLogs === undefined ? {} : { otelLogs }),
  };
}

/**
 * Resolves a NodeGroup zone against the region: a suffix letter becomes `<region><letter>`, a
 * full name must belong to the region. Returns undefined for a zone of another region.
 */
export function resolveZoneName(zone: string, region: string): string | undefined {
  if (ZONE_SUFFIX.test(zone)) return `${region}${zone}`;
  return zone.startsWith(region) ? zone : undefined;
}
