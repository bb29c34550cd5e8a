import { checkS3BucketName, parseExactS3Object } from '@podmin/util-names';
import { gzipSync, constants } from 'node:zlib';
import { ValidationError, type FieldProblem } from '@podmin/util-errors';
import {
  FILE_DEPENDENCIES,
  OTEL_LOGS_DEPENDENCIES,
  canonicalFileName,
  dependencyObjectKey,
  isArch,
  type Arch,
  type DependencyManifest,
} from '@podmin/util-dependencies';
import { isDigest } from '@podmin/util-oci';
import { AWS_USERDATA_TEMPLATE } from './generated/aws-template';

/** Everything an AWS NodeGroup's user-data is rendered from. */
export interface AwsUserDataInput {
  /** Architecture of the NodeGroup's instance type. */
  arch: Arch;
  cluster: string;
  nodegroup: string;
  /** The cluster bucket. */
  bucket: string;
  region: string;
  /** The published `dependencies/manifest.json`; must hold every canonical file for `arch`. */
  manifest: DependencyManifest;
  /**
   * kubelet `systemReserved`. Defaults to the spec's operating-system share plus the agent's
   * memory budget (DESIGN §6.6, §8); override only with a measured figure.
   */
  systemReserved?: { cpu: string; memory: string };
  /**
   * `setup --workload-ca-publish s3://BUCKET/KEY`: handed to podmin-agent as
   * PODMIN_WORKLOAD_CA_PUBLISH through /etc/podmin/node.env.
   */
  workloadCaPublish?: string;
  /**
   * `setup --otel-logs`: the node installs libpq5 then Fluent Bit from the manifest (which must
   * hold both for `arch`) and exports container logs. Absent: neither installed nor run.
   */
  otelLogs?: AwsUserDataOtelLogs;
}

/**
 * The log export a node runs, as the `otel_logs_*` user-data variables carry it (no secret:
 * exporter headers are fetched by the node from the secrets provider before each start).
 */
export interface AwsUserDataOtelLogs {
  /** The exact https URL. */
  endpoint: string;
  protocol: 'http' | 'grpc';
  mtls: boolean;
  /** `s3://BUCKET/KEY` of the private server CA bundle, when given. */
  ca?: string;
  /**
   * The secrets provider holding `/<cluster>/_system/otel-logs-headers` (the context's
   * default) when `headers-secret=true`; absent: no exporter headers.
   */
  headersProvider?: 'aws-parameter-store' | 'aws-secrets-manager';
}

/** The spec's operating-system share of systemReserved memory. */
export const OS_RESERVED_MIB = 96;
/**
 * Memory budget of every podmin-agent process together (DESIGN §8: ≤ 400 MiB; bench/agent.mjs
 * measured 296 MiB idle for the supervisor and three services).
 */
export const AGENT_MEMORY_BUDGET_MIB = 400;
/**
 * systemReserved computed from the agent's budget rather than copied (DESIGN §6.6): the spec's
 * 100m CPU, and memory for the OS plus the agent. kubeReserved stays 100m / 128Mi in the template.
 */
export const DEFAULT_SYSTEM_RESERVED = {
  cpu: '100m',
  memory: `${OS_RESERVED_MIB + AGENT_MEMORY_BUDGET_MIB}Mi`,
} as const;

/** The cluster-internal registry name containerd maps to the agent's loopback registry. */
export const CLUSTER_REGISTRY = 'registry.podmin.internal';

const BEGIN = '# @podmin:render-begin';
const END = '# @podmin:render-end';
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const REGION = /^[a-z]{2}(?:-[a-z]+)+-\d{1,2}$/;
const CPU = /^[1-9]\d{0,5}m$/;
const MEMORY = /^[1-9]\d{0,6}Mi$/;
const OTEL_ENDPOINT = /^https:\/\/[\x21-\x7e]+$/;
const OTEL_ENDPOINT_FORBIDDEN = /['"`$\\]/;
const IMAGE_PATH = /^mirror\/[a-z0-9.-]+(?::\d+)?(?:\/[a-z0-9]+(?:[._-][a-z0-9]+)*)+$/;

/**
 * Renders `userdata/aws.sh` for one NodeGroup: validates every substituted value, emits the
 * compact `'<canonical name>|<object key>|<digest>'` dependency rows for the complete
 * canonical set of `arch`, then strips comments (keeping the shebang) and blank lines outside
 * here-documents. ValidationError lists every bad value.
 */
export function renderAwsUserData(
  input: AwsUserDataInput,
  template: string = AWS_USERDATA_TEMPLATE,
): string {
  const problems: FieldProblem[] = [];
  const check = (field: string, value: string, pattern: RegExp, what: string) => {
    if (!pattern.test(value)) {
      problems.push({ field, message: `${JSON.stringify(value)} is not ${what}` });
    }
  };
  const arch = String(input.arch);
  if (!isArch(arch)) problems.push({ field: 'arch', message: 'must be amd64 or arm64' });
  check('cluster', input.cluster, LABEL, 'a lowercase DNS label');
  check('nodegroup', input.nodegroup, LABEL, 'a lowercase DNS label');
  const bucketProblem = checkS3BucketName(input.bucket);
  if (bucketProblem !== undefined) {
    problems.push({
      field: 'bucket',
      message: `${JSON.stringify(input.bucket)} is not an S3 bucket name: it ${bucketProblem}`,
    });
  }
  check('region', input.region, REGION, 'an AWS region name');
  const reserved = input.systemReserved ?? DEFAULT_SYSTEM_RESERVED;
  check('systemReserved.cpu', reserved.cpu, CPU, 'a millicore quantity such as 100m');
  check('systemReserved.memory', reserved.memory, MEMORY, 'a MiB quantity such as 96Mi');

  const publish = input.workloadCaPublish;
  if (publish !== undefined) {
    if (parseExactS3Object(publish) === undefined) {
      problems.push({
        field: 'workloadCaPublish',
        message: `${JSON.stringify(publish)} is not s3://BUCKET/KEY with a key of [A-Za-z0-9!_.()-] segments`,
      });
    }
  }

  const otelLogs = input.otelLogs;
  const otelRows: string[] = [];
  if (otelLogs !== undefined) {
    if (
      !OTEL_ENDPOINT.test(otelLogs.endpoint) ||
      OTEL_ENDPOINT_FORBIDDEN.test(otelLogs.endpoint) ||
      otelLogs.endpoint.length > 2048
    ) {
      problems.push({
        field: 'otelLogs.endpoint',
        message: `${JSON.stringify(otelLogs.endpoint)} is not an https URL of printable ASCII without quotes, backslashes or $`,
      });
    }
    if (otelLogs.protocol !== 'http' && otelLogs.protocol !== 'grpc') {
      problems.push({ field: 'otelLogs.protocol', message: 'must be http or grpc' });
    }
    if (otelLogs.ca !== undefined && parseExactS3Object(otelLogs.ca) === undefined) {
      problems.push({
        field: 'otelLogs.ca',
        message: `${JSON.stringify(otelLogs.ca)} is not s3://BUCKET/KEY with a key of [A-Za-z0-9!_.()-] segments`,
      });
    }
    const provider = otelLogs.headersProvider;
    if (
      provider !== undefined &&
      provider !== 'aws-parameter-store' &&
      provider !== 'aws-secrets-manager'
    ) {
      problems.push({
        field: 'otelLogs.headersProvider',
        message: 'must be aws-parameter-store or aws-secrets-manager',
      });
    }
    if (isArch(arch)) {
      for (const dependency of OTEL_LOGS_DEPENDENCIES) {
        const row = dependencyRow(
          dependency,
          arch,
          input.manifest,
          problems,
          'missing: --otel-logs installs libpq5 and Fluent Bit from the published manifest',
          true,
        );
        if (row !== undefined) otelRows.push(row);
      }
    }
  }

  const rows: string[] = [];
  if (isArch(arch)) {
    for (const dependency of FILE_DEPENDENCIES) {
      const row = dependencyRow(dependency, arch, input.manifest, problems);
      if (row !== undefined) rows.push(row);
    }
  }
  const pause = input.manifest.images['pause'];
  let pauseImage = '';
  if (pause === undefined) {
    problems.push({
      field: 'manifest.images.pause',
      message: 'missing: the sandbox image is required',
    });
  } else if (!IMAGE_PATH.test(pause.path) || !isDigest(pause.digest)) {
    problems.push({ field: 'manifest.images.pause', message: 'needs a mirror/ path and a digest' });
  } else {
    pauseImage = `${CLUSTER_REGISTRY}/${pause.path}@${pause.digest}`;
  }
  if (problems.length > 0) {
    throw new ValidationError('rendering AWS user-data', problems, { code: 'INVALID_ARGUMENT' });
  }

  const values = [
    `cluster='${input.cluster}'`,
    `nodegroup='${input.nodegroup}'`,
    `bucket='${input.bucket}'`,
    `region='${input.region}'`,
    `arch='${arch}'`,
    `pause_image='${pauseImage}'`,
    `system_reserved_cpu='${reserved.cpu}'`,
    `system_reserved_memory='${reserved.memory}'`,
    `workload_ca_publish='${publish ?? ''}'`,
    'dependencies=(',
    ...rows,
    ')',
    // Log export, only with --otel-logs (without it the script is byte for byte what it was,
    // and the node neither installs nor runs Fluent Bit): the packages in dpkg install order,
    // libpq5 before Fluent Bit, each row with the exact size the node checks besides the digest.
    ...(otelLogs === undefined
      ? []
      : [
          `otel_logs_endpoint='${otelLogs.endpoint}'`,
          `otel_logs_protocol='${otelLogs.protocol}'`,
          `otel_logs_mtls='${String(otelLogs.mtls)}'`,
          `otel_logs_ca='${otelLogs.ca ?? ''}'`,
          `otel_logs_headers_provider='${otelLogs.headersProvider ?? ''}'`,
          'otel_logs_packages=(',
          ...otelRows,
          ')',
        ]),
  ];
  return stripShellComments(replaceRenderBlock(template, values));
}

/**
 * The `'<canonical name>|<object key>|<digest>'` row of one manifest file (with `|<size>` when
 * `withSize`: the node checks the packages' exact size too), or a problem.
 */
function dependencyRow(
  dependency: (typeof FILE_DEPENDENCIES)[number],
  arch: Arch,
  manifest: DependencyManifest,
  problems: FieldProblem[],
  missing = 'missing: user-data requires the complete canonical set',
  withSize = false,
): string | undefined {
  const field = `manifest.dependencies.${dependency.name}.${arch}`;
  const entry = manifest.dependencies[dependency.name]?.[arch];
  if (entry === undefined) {
    problems.push({ field, message: missing });
    return undefined;
  }
  if (entry.path !== dependencyObjectKey(dependency, entry.version, arch)) {
    problems.push({
      field: `${field}.path`,
      message: `${JSON.stringify(entry.path)} is not ${dependencyObjectKey(dependency, entry.version, arch)}`,
    });
    return undefined;
  }
  if (!isDigest(entry.digest)) {
    problems.push({ field: `${field}.digest`, message: 'must be sha256:<hex> or sha512:<hex>' });
    return undefined;
  }
  if (withSize && !(Number.isSafeInteger(entry.size) && entry.size > 0)) {
    problems.push({ field: `${field}.size`, message: 'must be a positive whole number of bytes' });
    return undefined;
  }
  const size = withSize ? `|${entry.size}` : '';
  return `  '${canonicalFileName(dependency)}|${entry.path}|${entry.digest}${size}'`;
}

function replaceRenderBlock(template: string, values: readonly string[]): string {
  const lines = template.split('\n');
  const begin = lines.indexOf(BEGIN);
  const end = lines.indexOf(END);
  if (
    begin === -1 ||
    end < begin ||
    lines.lastIndexOf(BEGIN) !== begin ||
    lines.lastIndexOf(END) !== end
  ) {
    throw new Error('rendering AWS user-data: the template needs exactly one render block');
  }
  return [...lines.slice(0, begin), ...values, ...lines.slice(end + 1)].join('\n');
}

/**
 * Removes full-line comments (keeping a leading shebang) and blank lines, leaving
 * here-document bodies untouched. Inline comments are not parsed (quoting makes that unsafe),
 * so templates keep comments on their own lines.
 */
export function stripShellComments(script: string): string {
  const out: string[] = [];
  let heredocEnd: string | undefined;
  script.split('\n').forEach((line, index) => {
    if (heredocEnd !== undefined) {
      out.push(line);
      if (line === heredocEnd) heredocEnd = undefined;
      return;
    }
    const trimmed = line.trim();
    if (index === 0 && line.startsWith('#!')) {
      out.push(line);
      return;
    }
    if (trimmed === '' || trimmed.startsWith('#')) return;
    out.push(line);
    const heredoc = /(?<!<)<<(?!<)-?\s*(['"]?)([A-Za-z_][A-Za-z0-9_]*)\1/.exec(line);
    if (heredoc?.[2] !== undefined) heredocEnd = heredoc[2];
  });
  return `${out.join('\n')}\n`;
}

/**
 * Deterministic gzip of user-data: maximum compression, header mtime 0 and a fixed OS byte
 * (3, Unix) whatever zlib build or platform produced it. Same script, same bytes.
 */
export function gzipUserData(script: string): Buffer {
  const bytes = gzipSync(Buffer.from(script, 'utf8'), { level: constants.Z_BEST_COMPRESSION });
  bytes.writeUInt32LE(0, 4);
  bytes[9] = 3;
  return bytes;
}

/** Renders and gzips in one step: the bytes a launch template receives before base64. */
export function renderAwsUserDataGzip(input: AwsUserDataInput): Buffer {
  return gzipUserData(renderAwsUserData(input));
}
