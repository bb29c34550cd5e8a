import path from 'node:path';
import { parseArgs } from 'node:util';
import { ValidationError } from '@podmin/util-errors';
import type { FieldProblem } from '@podmin/util-errors';

/** Default loopback address of the node registry. */
export const DEFAULT_LISTEN = '127.0.0.1:5000';

/** The registry process's validated, frozen configuration. */
export interface RegistryConfig {
  /** Object-storage provider. */
  readonly provider: 'local' | 'aws';
  /** S3 bucket name (aws) or absolute bucket directory (local). */
  readonly bucket: string;
  /** Provider region (required for aws). */
  readonly region: string | undefined;
  /** Cluster identifier, logged with every start. */
  readonly cluster: string;
  /** Loopback address to bind. */
  readonly listen: { readonly host: string; readonly port: number };
  /** S3 endpoint override from `AWS_ENDPOINT_URL_S3` (emulators); path-style addressing then. */
  readonly s3Endpoint: string | undefined;
}

const BUCKET_NAME = /^(?!xn--)(?!.*\.\.)[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const REGION = /^[a-z]{2}(-[a-z]+)+-\d+$/;
const CLUSTER = /^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$/;

/**
 * Parses the agent-style flags `--provider local|aws --bucket B --region R --cluster C` and
 * the development option `--listen HOST:PORT` (loopback only, default 127.0.0.1:5000) once,
 * listing every bad value in one ValidationError. Reads `AWS_ENDPOINT_URL_S3` from `env`.
 */
export function parseRegistryConfig(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
): RegistryConfig {
  const problems: FieldProblem[] = [];
  const values = readFlags(argv, problems);
  const provider = values['provider'];
  if (provider !== 'local' && provider !== 'aws') {
    problems.push({ field: '--provider', message: `must be local or aws, not ${show(provider)}` });
  }
  let bucket = values['bucket'] ?? '';
  if (bucket === '') {
    problems.push({ field: '--bucket', message: 'is required' });
  } else if (provider === 'aws' && !BUCKET_NAME.test(bucket)) {
    problems.push({ field: '--bucket', message: `${show(bucket)} is not a valid S3 bucket name` });
  } else if (provider === 'local') {
    bucket = path.resolve(cwd, bucket);
  }
  const region = values['region'];
  if (
    region !== undefined &&
    !REGION.test(region) &&
    !(provider === 'local' && region === 'local')
  ) {
    problems.push({
      field: '--region',
      message: `${show(region)} is not a region such as us-east-1`,
    });
  } else if (region === undefined && provider === 'aws') {
    problems.push({ field: '--region', message: 'is required for --provider aws' });
  }
  const cluster = values['cluster'];
  if (cluster === undefined || !CLUSTER.test(cluster)) {
    problems.push({
      field: '--cluster',
      message: `must be a DNS-1123 label of at most 40 characters, not ${show(cluster)}`,
    });
  }
  const listen = parseListen(values['listen'] ?? DEFAULT_LISTEN, problems);
  const endpoint = env['AWS_ENDPOINT_URL_S3'];
  let s3Endpoint: string | undefined;
  if (endpoint !== undefined && endpoint !== '') {
    if (!URL.canParse(endpoint) || !/^https?:$/.test(new URL(endpoint).protocol)) {
      problems.push({
        field: 'AWS_ENDPOINT_URL_S3',
        message: `${show(endpoint)} is not an http(s) URL`,
      });
    } else {
      s3Endpoint = endpoint;
    }
  }
  if (problems.length > 0) {
    throw new ValidationError('validating agent-registry configuration', problems, {
      code: 'INVALID_ARGUMENT',
    });
  }
  return Object.freeze({
    provider: provider as 'local' | 'aws',
    bucket,
    region,
    cluster: cluster ?? '',
    listen: Object.freeze(listen ?? { host: '127.0.0.1', port: 5000 }),
    s3Endpoint,
  });
}

const FLAGS = ['provider', 'bucket', 'region', 'cluster', 'listen'] as const;

/** Reads `--flag value` / `--flag=value`; unknown flags, missing values and positionals are problems. */
function readFlags(
  argv: readonly string[],
  problems: FieldProblem[],
): Record<string, string | undefined> {
  const { values, positionals } = parseArgs({
    args: [...argv],
    strict: false,
    allowPositionals: true,
    options: Object.fromEntries(FLAGS.map((flag) => [flag, { type: 'string' as const }])),
  });
  const result: Record<string, string | undefined> = {};
  for (const [flag, value] of Object.entries(values)) {
    if (!(FLAGS as readonly string[]).includes(flag)) {
      problems.push({
        field: `--${flag}`,
        message: `is not a flag; use ${FLAGS.map((f) => `--${f}`).join(', ')}`,
      });
    } else if (typeof value !== 'string') {
      problems.push({ field: `--${flag}`, message: 'needs a value' });
    } else {
      result[flag] = value;
    }
  }
  if (positionals.length > 0) {
    problems.push({
      field: 'arguments',
      message: `takes no positional arguments, got ${JSON.stringify(positionals)}`,
    });
  }
  return result;
}

function parseListen(
  value: string,
  problems: FieldProblem[],
): { host: string; port: number } | undefined {
  const match = /^(\[::1\]|127(?:\.\d{1,3}){3}):(\d{1,5})$/.exec(value);
  const port = Number(match?.[2]);
  const host = match?.[1]?.replace(/^\[|\]$/g, '');
  const octetsOk = host === '::1' || (host?.split('.').every((o) => Number(o) <= 255) ?? false);
  if (match === null || host === undefined || !octetsOk || port > 65535) {
    problems.push({
      field: '--listen',
      message: `must be a loopback 127.x.y.z:PORT or [::1]:PORT, not ${show(value)}`,
    });
    return undefined;
  }
  return { host, port };
}

function show(value: string | undefined): string {
  return value === undefined ? 'missing' : JSON.stringify(value);
}
