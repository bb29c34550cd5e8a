// The configuration keys Fluent Bit documents for each section podmin writes, copied by hand
// from the Fluent Bit manual (docs.fluentbit.io, fluent/fluent-bit-docs): administration/
// configuring-fluent-bit/yaml/service-section.md and buffering-and-storage.md (service),
// pipeline/inputs/tail.md with the common input properties, pipeline/outputs/opentelemetry.md
// with the common output properties (storage.total_limit_size, retry_limit), and pipeline/
// processors/content-modifier.md and opentelemetry-envelope.md. A key the renderer writes that
// is not listed here fails the test: add it only after finding it in the manual.

/** Keys of the `service` section. */
export const SERVICE_KEYS: readonly string[] = [
  'flush',
  'grace',
  'daemon',
  'dns.mode',
  'log_file',
  'log_level',
  'parsers_file',
  'plugins_file',
  'streams_file',
  'http_server',
  'http_listen',
  'http_port',
  'hot_reload',
  'coro_stack_size',
  'scheduler.cap',
  'scheduler.base',
  'json.convert_nan_to_null',
  'storage.path',
  'storage.sync',
  'storage.checksum',
  'storage.max_chunks_up',
  'storage.backlog.mem_limit',
  'storage.metrics',
  'storage.delete_irrecoverable_chunks',
];

/** Keys of a `tail` input, with the properties every input takes. */
export const TAIL_INPUT_KEYS: readonly string[] = [
  // Every input.
  'name',
  'tag',
  'alias',
  'log_level',
  'mem_buf_limit',
  'storage.type',
  'storage.pause_on_chunks_overlimit',
  'threaded',
  'processors',
  // tail.
  'buffer_chunk_size',
  'buffer_max_size',
  'path',
  'path_key',
  'exclude_path',
  'offset_key',
  'read_from_head',
  'refresh_interval',
  'rotate_wait',
  'ignore_older',
  'skip_long_lines',
  'skip_empty_lines',
  'db',
  'db.sync',
  'db.locking',
  'db.journal_mode',
  'db.compare_filename',
  'exit_on_eof',
  'parser',
  'key',
  'inotify_watcher',
  'tag_regex',
  'static_batch_size',
  'multiline.parser',
];

/** Keys of a `content_modifier` processor. */
export const CONTENT_MODIFIER_KEYS: readonly string[] = [
  'name',
  'action',
  'context',
  'converted_type',
  'key',
  'pattern',
  'value',
];

/** Keys of an `opentelemetry_envelope` processor: none besides its name. */
export const OPENTELEMETRY_ENVELOPE_KEYS: readonly string[] = ['name'];

/** Keys of an `opentelemetry` output, with the properties every output takes. */
export const OPENTELEMETRY_OUTPUT_KEYS: readonly string[] = [
  // Every output.
  'name',
  'match',
  'match_regex',
  'alias',
  'log_level',
  'retry_limit',
  'storage.total_limit_size',
  'workers',
  // opentelemetry.
  'add_label',
  'batch_size',
  'compress',
  'grpc',
  'grpc_logs_uri',
  'header',
  'host',
  'http2',
  'http_passwd',
  'http_user',
  'log_response_payload',
  'logs_body_key',
  'logs_body_key_attributes',
  'logs_uri',
  'port',
  'proxy',
  'net.connect_timeout',
  'net.keepalive',
  'tls',
  'tls.ca_file',
  'tls.ca_path',
  'tls.crt_file',
  'tls.debug',
  'tls.key_file',
  'tls.key_passwd',
  'tls.min_version',
  'tls.verify',
  'tls.verify_hostname',
  'tls.vhost',
];

/** The documented values of the keys whose value is an enumeration. */
export const ENUMERATED_VALUES: Readonly<Record<string, readonly string[]>> = {
  'storage.type': ['memory', 'filesystem'],
  'storage.sync': ['normal', 'full'],
  'content_modifier.action': ['insert', 'upsert', 'delete', 'rename', 'hash', 'extract', 'convert'],
  'content_modifier.context': [
    'attributes',
    'body',
    'otel_resource_attributes',
    'otel_scope_name',
    'otel_scope_version',
    'otel_scope_attributes',
    'otel_log_attributes',
  ],
  'multiline.parser': ['docker', 'cri', 'go', 'python', 'java', 'ruby'],
  grpc: ['on', 'off'],
};
