import { PodminError } from '@podmin/util-errors';
import type { Arch } from '@podmin/util-dependencies';
import type { OtelLogsConfig } from './otel-logs-flag';

/** Where setup keeps the module inputs in the cluster bucket (spec "Object Storage"). */
export const TFVARS_OBJECT_KEY = 'tfstate/podmin.auto.tfvars.json';
/** The engine state object in the cluster bucket. */
export const TFSTATE_OBJECT_KEY = 'tfstate/podmin.tfstate';
/** Name of the generated variables file in the work directory. */
export const TFVARS_FILE_NAME = 'podmin.auto.tfvars.json';
/** Largest module-inputs object read back from the bucket. */
export const MAX_TFVARS_BYTES = 8 * 1024 * 1024;

/** A NAT64 instance in the module inputs. */
export interface Nat64Vars {
  instance_type: string;
  arch: Arch;
}

/** One NodeGroup in the module inputs. */
export interface NodeGroupVars {
  size: number;
  disk_size: number;
  instance_type: string;
  zone: string;
  arch: Arch;
  /** A dedicated NAT64 instance for this NodeGroup, or null for the shared one of its zone. */
  nat64: Nat64Vars | null;
  /** The rendered bootstrap script (userdata/aws.sh). */
  user_data: string;
}

/** The module's inputs: `podmin.auto.tfvars.json`, the contract between the CLI and infra/aws. */
export interface ModuleVars {
  cluster: string;
  region: string;
  bucket: string;
  vpc_cidr: string;
  /** An untagged, compatible VPC to reuse (never deleted), or null to create one. */
  existing_vpc_id: string | null;
  /** The pinned Debian 13 AMI of every architecture the NodeGroups and NAT64 instances use. */
  amis: Partial<Record<Arch, string>>;
  /** The shared NAT64 instance type (one per zone with an unannotated NodeGroup), or null. */
  nat64: Nat64Vars | null;
  /** Changes on every setup so NAT64 instances are refreshed (launch-before-terminate). */
  nat64_generation: string;
  nodegroups: Record<string, NodeGroupVars>;
  /**
   * The `--workload-ca-publish` object the node role may GetObject and PutObject, or null.
   * Setup always writes it; inputs saved before it existed lack it (the module's default, null).
   */
  workload_ca_publish?: { bucket: string; key: string } | null;
  /**
   * `setup --otel-logs`, or null without it (Fluent Bit neither installed nor run). The node
   * role may GetObject exactly `ca_bucket`/`ca_key` when set. Inputs saved before it existed
   * lack it (the module's default, null).
   */
  otel_logs?: OtelLogsVars | null;
}

/** The `--otel-logs` configuration as the module and the node read it. */
export interface OtelLogsVars {
  /** The exact https URL (the OTLP/HTTP signal URL, or the OTLP/gRPC endpoint). */
  endpoint: string;
  protocol: 'http' | 'grpc';
  mtls: boolean;
  /** Bucket of the exact private server CA bundle object, or null for the OS trust store. */
  ca_bucket: string | null;
  /** Key of that object, or null. */
  ca_key: string | null;
  /** Whether the node reads `/<cluster>/_system/otel-logs-headers` before each Fluent Bit start. */
  headers_secret: boolean;
}

/** The module-input form of a parsed `--otel-logs` (null when log export is off). */
export function otelLogsVars(config: OtelLogsConfig | undefined): OtelLogsVars | null {
  if (config === undefined) return null;
  return {
    endpoint: config.endpoint,
    protocol: config.protocol,
    mtls: config.mtls,
    ca_bucket: config.ca?.bucket ?? null,
    ca_key: config.ca?.key ?? null,
    headers_secret: config.headersSecret,
  };
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value as Record<string, unknown>)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

/** Canonical JSON of the module inputs: sorted keys, two-space indent, trailing newline. */
export function serializeModuleVars(vars: ModuleVars): string {
  return JSON.stringify(sortKeys(vars), null, 2) + '\n';
}

/**
 * Reads module inputs back (from the bucket, for a teardown after `disconnect`). Checks the
 * fields teardown relies on and that they belong to `cluster`; the rest is passed through.
 */
export function parseModuleVars(text: string, source: string, cluster: string): ModuleVars {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new PodminError('INVALID_ARGUMENT', `reading ${source}: not valid JSON`, { cause: err });
  }
  const obj = raw as Partial<Record<keyof ModuleVars, unknown>>;
  if (
    typeof raw !== 'object' ||
    raw === null ||
    Array.isArray(raw) ||
    typeof obj.cluster !== 'string' ||
    typeof obj.region !== 'string' ||
    typeof obj.bucket !== 'string' ||
    typeof obj.nodegroups !== 'object' ||
    obj.nodegroups === null
  ) {
    throw new PodminError(
      'INVALID_ARGUMENT',
      `reading ${source}: not podmin module inputs (cluster, region, bucket and nodegroups are required)`,
    );
  }
  if (obj.cluster !== cluster) {
    throw new PodminError(
      'INVALID_ARGUMENT',
      `reading ${source}: the inputs belong to cluster ${obj.cluster}, not ${cluster}`,
    );
  }
  return raw as ModuleVars;
}
