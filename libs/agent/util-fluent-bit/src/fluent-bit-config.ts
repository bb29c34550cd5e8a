import { Document } from 'yaml';
import { ValidationError, type FieldProblem } from '@podmin/util-errors';
import {
  CONTAINER_LOG_DIR,
  KUBELET_LOG_NAME_ATTRIBUTES,
  KUBELET_LOG_NAME_PATTERN,
} from './kubelet-log-name';

/** Where Fluent Bit keeps its file offsets and its filesystem queue on a node. */
export const FLUENT_BIT_STATE_DIR = '/var/lib/fluent-bit';

/** The bound of the filesystem output queue (the spec's 1 GiB); the oldest chunks go first. */
export const FLUENT_BIT_QUEUE_LIMIT = '1G';

/** The OTLP transports: OTLP/HTTP protobuf (the default) or OTLP/gRPC. */
export type OtelLogsProtocol = 'http' | 'grpc';

/** Everything the node's Fluent Bit configuration is rendered from. */
export interface FluentBitConfigInput {
  /** The exact `https://` URL given to `setup --otel-logs endpoint=`. */
  readonly endpoint: string;
  readonly protocol: OtelLogsProtocol;
  /** Resource attributes: the cluster, the NodeGroup and the node's host name. */
  readonly cluster: string;
  readonly nodegroup: string;
  readonly hostname: string;
  /** The exporter's private server CA bundle (`ca=`); absent: the operating system's trust. */
  readonly caFile?: string;
  /** The node's telemetry leaf (`mtls=true`): files of one concrete generation. */
  readonly clientCertificate?: { readonly certFile: string; readonly keyFile: string };
  /** Exporter headers (`headers-secret=true`), already validated. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Offsets and queue directory; {@link FLUENT_BIT_STATE_DIR} by default. */
  readonly stateDir?: string;
}

/** The OTLP resource attribute keys the node sets on every exported batch. */
export const RESOURCE_ATTRIBUTES = Object.freeze({
  cluster: 'k8s.cluster.name',
  nodegroup: 'podmin.nodegroup',
  hostname: 'host.name',
} as const);

/** Host, port and path of the endpoint, as Fluent Bit's opentelemetry output takes them. */
export interface OtlpTarget {
  readonly host: string;
  readonly port: number;
  /** The exact path and query of the URL (OTLP/HTTP); undefined for OTLP/gRPC. */
  readonly logsUri: string | undefined;
}

/**
 * Splits the endpoint for the opentelemetry output: OTLP/HTTP keeps the URL's exact path and
 * query (no signal path is derived); OTLP/gRPC takes `https://HOST[:PORT]` only, since its
 * method path is fixed. Throws ValidationError naming `endpoint`.
 */
export function otlpTarget(endpoint: string, protocol: OtelLogsProtocol): OtlpTarget {
  const fail = (message: string): never => {
    throw new ValidationError(
      'rendering the Fluent Bit configuration',
      [{ field: 'endpoint', message: `${JSON.stringify(endpoint)} ${message}` }],
      { code: 'INVALID_ARGUMENT' },
    );
  };
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return fail('is not a URL');
  }
  if (url.protocol !== 'https:') fail('is not an https URL; TLS is mandatory');
  if (url.username !== '' || url.password !== '') fail('carries credentials');
  if (url.hash !== '') fail('has a fragment');
  const rawPath = endpoint.replace(/^https:\/\/[^/?#]*/, '');
  if (protocol === 'grpc' && rawPath !== '' && rawPath !== '/') {
    fail('has a path or query; an OTLP/gRPC endpoint is https://HOST[:PORT]');
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = url.port === '' ? 443 : Number(url.port);
  return {
    host,
    port,
    // As typed, not as URL normalizes it: the collector matches the exact signal URL.
    logsUri: protocol === 'grpc' ? undefined : rawPath === '' ? '/' : rawPath,
  };
}

/** One Fluent Bit YAML section: keys in the order written, values as Fluent Bit reads them. */
export interface FluentBitSection {
  readonly [key: string]: FluentBitValue;
}

/** A value in a section: a scalar, a list of values (`header`), or nested sections (processors). */
export type FluentBitValue =
  string | number | readonly string[] | FluentBitSection | readonly FluentBitSection[];

/**
 * The node's Fluent Bit configuration (YAML) as a plain object: tail of kubelet's CRI logs with
 * partial lines rejoined, offsets in a database, a filesystem queue bounded to
 * {@link FLUENT_BIT_QUEUE_LIMIT}; per record the source path, the stream and the container
 * identity from the file name; cluster, NodeGroup and host name as OTLP resource attributes;
 * TLS with certificate and host name verification always on.
 */
export function fluentBitConfig(input: FluentBitConfigInput): {
  service: FluentBitSection;
  pipeline: { inputs: FluentBitSection[]; outputs: FluentBitSection[] };
} {
  const problems: FieldProblem[] = [];
  for (const field of ['cluster', 'nodegroup', 'hostname'] as const) {
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$/.test(input[field]))
      problems.push({ field, message: `${JSON.stringify(input[field])} is not a name` });
  }
  for (const [field, file] of [
    ['caFile', input.caFile],
    ['clientCertificate.certFile', input.clientCertificate?.certFile],
    ['clientCertificate.keyFile', input.clientCertificate?.keyFile],
  ] as const) {
    if (file !== undefined && !/^\/[A-Za-z0-9._/-]+$/.test(file))
      problems.push({ field, message: `${JSON.stringify(file)} is not an absolute path` });
  }
  if (problems.length > 0)
    throw new ValidationError('rendering the Fluent Bit configuration', problems, {
      code: 'INVALID_ARGUMENT',
    });
  const target = otlpTarget(input.endpoint, input.protocol);
  const state = input.stateDir ?? FLUENT_BIT_STATE_DIR;

  const rename = (key: string, value: string): FluentBitSection => ({
    name: 'content_modifier',
    action: 'rename',
    key,
    value,
  });
  const resource = (key: string, value: string): FluentBitSection => ({
    name: 'content_modifier',
    context: 'otel_resource_attributes',
    action: 'upsert',
    key,
    value,
  });
  const headers = Object.entries(input.headers ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => `${name} ${value}`);

  return {
    service: {
      flush: 1,
      log_level: 'info',
      'storage.path': `${state}/storage`,
      'storage.sync': 'normal',
      'storage.checksum': 'off',
      'storage.max_chunks_up': 64,
      'storage.backlog.mem_limit': '16M',
    },
    pipeline: {
      inputs: [
        {
          name: 'tail',
          tag: 'containers',
          path: `${CONTAINER_LOG_DIR}/*.log`,
          path_key: 'log.file.path',
          // CRI lines: time, stream, P/F flag, message; partial (P) records are rejoined.
          'multiline.parser': 'cri',
          db: `${state}/containers.db`,
          'db.locking': 'true',
          read_from_head: 'true',
          refresh_interval: 5,
          rotate_wait: 10,
          skip_long_lines: 'on',
          'storage.type': 'filesystem',
          processors: {
            logs: [
              {
                name: 'content_modifier',
                action: 'extract',
                key: 'log.file.path',
                pattern: KUBELET_LOG_NAME_PATTERN,
              },
              ...Object.entries(KUBELET_LOG_NAME_ATTRIBUTES).map(([group, key]) =>
                rename(group, key),
              ),
              rename('stream', 'log.iostream'),
              { name: 'content_modifier', action: 'delete', key: '_p' },
              { name: 'opentelemetry_envelope' },
              resource(RESOURCE_ATTRIBUTES.cluster, input.cluster),
              resource(RESOURCE_ATTRIBUTES.nodegroup, input.nodegroup),
              resource(RESOURCE_ATTRIBUTES.hostname, input.hostname),
            ],
          },
        },
      ],
      outputs: [
        {
          name: 'opentelemetry',
          match: 'containers',
          host: target.host,
          port: target.port,
          ...(target.logsUri === undefined ? { grpc: 'on' } : { logs_uri: target.logsUri }),
          // The message is the body; every other field (path, stream, container identity) is a
          // log record attribute.
          logs_body_key: '$log',
          logs_body_key_attributes: 'true',
          tls: 'on',
          'tls.verify': 'on',
          'tls.verify_hostname': 'on',
          ...(input.caFile === undefined ? {} : { 'tls.ca_file': input.caFile }),
          ...(input.clientCertificate === undefined
            ? {}
            : {
                'tls.crt_file': input.clientCertificate.certFile,
                'tls.key_file': input.clientCertificate.keyFile,
              }),
          ...(headers.length === 0 ? {} : { header: headers }),
          // Retried until delivered; the queue bound drops the oldest chunks instead.
          retry_limit: 'no_limits',
          'storage.total_limit_size': FLUENT_BIT_QUEUE_LIMIT,
        },
      ],
    },
  };
}

/** {@link fluentBitConfig} as Fluent Bit's YAML, deterministic for the same input. */
export function renderFluentBitConfig(input: FluentBitConfigInput): string {
  return (
    '# Generated by `podmin-agent otel-logs-config` before each Fluent Bit start. Do not edit.\n' +
    new Document(fluentBitConfig(input)).toString({ lineWidth: 0 })
  );
}
