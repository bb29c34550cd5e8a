import type { FieldProblem } from '@podmin/util-errors';
import { parseExactObject, type WorkloadCaPublish } from './s3-object-flag';

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

const OTEL_ENDPOINT_MAX = 2048;
// The URL becomes a single-quoted user-data value and a Fluent Bit configuration value.
const OTEL_ENDPOINT_TEXT = /^[\x21-\x7e]+$/;
const OTEL_ENDPOINT_FORBIDDEN = /['"`$\\]/;

/** The field name of one `--otel-logs` key in a problem. */
const at = (key: string) => `--otel-logs ${key}`;

/**
 * The `key=value` pairs of `--otel-logs`, each known key at most once and with a value; pushes a
 * problem for every other pair.
 */
function otelLogsPairs(value: string, problems: FieldProblem[]): Map<string, string> {
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
  return given;
}

/**
 * Parses `--otel-logs endpoint=URL[,protocol=http|grpc][,mtls=true|false][,ca=s3://B/K]
 * [,headers-secret=true|false]`: comma-separated `key=value` pairs, each key at most once;
 * `endpoint` required and an https URL without credentials or fragment (OTLP/gRPC: no path or
 * query, the service path is fixed); booleans exactly `true` or `false`; `ca` one exact S3
 * object. Returns the configuration, or every problem, each naming its key and what is allowed.
 */
export function parseOtelLogs(value: string): OtelLogsConfig | FieldProblem[] {
  const problems: FieldProblem[] = [];
  const given = otelLogsPairs(value, problems);
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

/** Why an `--otel-logs endpoint=` URL is refused, or undefined when it is accepted. */
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
