/**
 * Where the node's log-export material lives, as agent-identity writes it and
 * `podmin-agent otel-logs-config` (Fluent Bit's start) reads it: the spec's telemetry subtree
 * `/run/podmin/telemetry`, owned by agent-identity.
 */
/** The telemetry subtree, below the node root. */
export const TELEMETRY_DIR = 'run/podmin/telemetry';
/** Generations of the log-export client identity inside the telemetry subtree. */
export const TELEMETRY_GENERATIONS_DIR = 'otel-logs-generations';
/** The symlink selecting the current generation. */
export const TELEMETRY_LINK = 'otel-logs';
/** The certificate and key file names inside a generation. */
export const TELEMETRY_CERT_FILE = 'client.crt';
export const TELEMETRY_KEY_FILE = 'client.key';
/** The exporter's private server-CA bundle (`ca=`), installed atomically. */
export const EXPORTER_CA_FILE = 'otel-logs-ca.pem';
