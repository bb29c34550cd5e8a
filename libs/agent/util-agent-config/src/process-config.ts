import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { AGENT_FLAGS, checkAgentFlags, type AgentConfig } from './agent-config';
import { ELECTION_LEASE_MS, ELECTION_POLL_MS } from './agent-constants';
import type { AgentProviderLookup } from './provider-rules';
import { ValidationError, type FieldProblem } from '@podmin/util-errors';
import { parseS3ObjectUrl } from '@podmin/util-names';
import { parseOtelLogsSettings, type OtelLogsSettings } from './otel-logs-settings';

/** A loopback `host:port` to bind. */
export interface LoopbackAddress {
  readonly host: string;
  readonly port: number;
}

/**
 * The validated, frozen configuration of podmin-agent and of every service process it starts:
 * the agent's six flags plus the node facts and development knobs read from the environment.
 */
export interface AgentProcessConfig extends AgentConfig {
  /** Node root (`/` on a VM; a directory under the Podmin data directory for the local provider). */
  readonly nodeRoot: string;
  /** The node's IPv6 address (Pods' DNS server). */
  readonly nodeAddress: string;
  /** Agent runtime directory holding the processes' Unix sockets. */
  readonly runtimeDir: string;
  /** Local provider: the file-backed secret store. */
  readonly localSecretsFile: string | undefined;
  /** `s3://BUCKET/KEY` the leader keeps the workload CA bundle at (`--workload-ca-publish`). */
  readonly workloadCaPublish: string | undefined;
  /** The agent's part in container log export (`setup --otel-logs`), from PODMIN_OTEL_LOGS_*. */
  readonly otelLogs: OtelLogsSettings;
  /** Where podmin-agent serves /healthz and /readyz (PODMIN_AGENT_HEALTH_ADDRESS). */
  readonly healthAddress: LoopbackAddress;
  /** Where agent-registry listens (PODMIN_AGENT_REGISTRY_LISTEN). */
  readonly registryListen: LoopbackAddress;
  /** Where agent-dns answers, UDP and TCP (PODMIN_AGENT_DNS_LISTEN). */
  readonly dnsListen: LoopbackAddress;
  /** The node's ID in the cluster (PODMIN_NODE_ID; the host name by default). */
  readonly nodeId: string;
  /** TCP port of the coordination gRPC on the node address (PODMIN_AGENT_COORDINATION_PORT). */
  readonly coordinationPort: number;
  /** kubelet's Pods API socket (PODMIN_KUBELET_PODS_SOCKET). */
  readonly kubeletPodsSocket: string;
  /**
   * The election's lease and poll (PODMIN_ELECTION_LEASE_MS, PODMIN_ELECTION_POLL_MS; 35 s and
   * 5 s), checked together: the poll at most half the lease, and `lease − renewMarginMs(lease) −
   * poll ≥ MIN_LEADER_DUTY_MS`. Every node of a cluster must use the same lease; only tests
   * shorten them.
   */
  readonly election: { readonly leaseMs: number; readonly pollMs: number };
}

// The election lease and poll when PODMIN_ELECTION_LEASE_MS / _POLL_MS are unset (production).
const DEFAULT_ELECTION_LEASE_MS = ELECTION_LEASE_MS;
const DEFAULT_ELECTION_POLL_MS = ELECTION_POLL_MS;
// The shortest lease or poll accepted at all.
const MIN_ELECTION_MS = 100;

/**
 * The least leadership a leader duty needs left to start: agent-identity's workload CA rotation
 * pass (a few conditional writes) must fit in what remains of the leader's term, and the
 * configuration refuses timings that never leave a leader this much.
 */
export const MIN_LEADER_DUTY_MS = 5_000;

/**
 * How long before its lease would expire a leader stops its duties (the elector's
 * `renewMarginMs`): 2/7 of the lease, production's proportion (10 s of 35 s), so a shorter test
 * lease keeps the same safety against timer lateness and clock-rate differences.
 */
export function renewMarginMs(leaseMs: number): number {
  return Math.round((leaseMs * 2) / 7);
}

/**
 * The leadership a leader has left for duties just before its next renew, its worst moment:
 * duties stay valid `lease − renew margin` after a renew, and the next renew comes up to one
 * poll later.
 */
export function leaderDutyWindowMs(leaseMs: number, pollMs: number): number {
  return leaseMs - renewMarginMs(leaseMs) - pollMs;
}

/**
 * The shortest lease valid with a poll of `pollMs`: at least twice the poll, and leaving
 * {@link MIN_LEADER_DUTY_MS} of duties before the next renew.
 */
export function minimumElectionLeaseMs(pollMs: number): number {
  // leaderDutyWindowMs never falls as the lease grows, and the rounded margin puts it at most
  // half a millisecond above 5/7 of the lease minus the poll: start just below and step up.
  let leaseMs = Math.max(2 * pollMs, Math.floor(((MIN_LEADER_DUTY_MS + pollMs - 0.5) * 7) / 5));
  while (leaderDutyWindowMs(leaseMs, pollMs) < MIN_LEADER_DUTY_MS) leaseMs += 1;
  return leaseMs;
}

// A node ID goes into a SPIFFE URI path segment and into dns/leader.json.
const NODE_ID = /^[A-Za-z0-9._-]{1,63}$/;

/** What an invocation of an agent program asks for. */
export type AgentInvocation =
  | { readonly kind: 'help' }
  | { readonly kind: 'version' }
  | { readonly kind: 'run'; readonly config: AgentProcessConfig };

/** Default loopback address of the aggregated health endpoints. */
export const DEFAULT_HEALTH_ADDRESS = '127.0.0.1:9440';
/** Default loopback address of the node registry. */
export const DEFAULT_REGISTRY_LISTEN = '127.0.0.1:5000';
/** Default loopback address of the Service DNS server. */
export const DEFAULT_DNS_LISTEN = '127.0.0.1:1053';
/** Default port of the coordination gRPC on `[node IPv6]`. */
export const DEFAULT_COORDINATION_PORT = 8081;
/** kubelet's Pods API socket below the node root. */
export const KUBELET_PODS_SOCKET = 'var/lib/kubelet/pods-api/pods-api.sock';

/** Environment variables the agent's processes read, besides the AWS SDK's own. */
export const AGENT_ENVIRONMENT = [
  'PODMIN_NODE_ROOT',
  'PODMIN_NODE_ADDRESS',
  'PODMIN_LOCAL_SECRETS_FILE',
  'PODMIN_WORKLOAD_CA_PUBLISH',
  'PODMIN_OTEL_LOGS_MTLS',
  'PODMIN_OTEL_LOGS_CA',
  'PODMIN_AGENT_HEALTH_ADDRESS',
  'PODMIN_AGENT_REGISTRY_LISTEN',
  'PODMIN_AGENT_DNS_LISTEN',
  'PODMIN_NODE_ID',
  'PODMIN_AGENT_COORDINATION_PORT',
  'PODMIN_KUBELET_PODS_SOCKET',
  'PODMIN_ELECTION_LEASE_MS',
  'PODMIN_ELECTION_POLL_MS',
] as const;

/**
 * The one parser of every agent program (podmin-agent and each service process): reads the six
 * flags (plus `--help`/`--version`) and the environment once, with the rules of the provider
 * that `providers` knows by the `--provider` name, and throws one ValidationError listing every
 * bad value (except log export's, which only turn log export off: {@link OtelLogsSettings}).
 */
export function parseAgentInvocation(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  providers: AgentProviderLookup,
): AgentInvocation {
  const problems: FieldProblem[] = [];
  const flags = readFlags(argv, problems);
  if (flags.help) return { kind: 'help' };
  if (flags.version) return { kind: 'version' };
  const base = checkAgentFlags(flags.values, providers, problems);
  // An unknown provider is already a problem; its node facts are then left empty.
  const rules = providers.has(base.provider) ? providers.get(base.provider) : undefined;
  const rootRule = rules?.nodeRoot;
  const nodeRoot =
    env['PODMIN_NODE_ROOT'] ?? (rootRule && 'default' in rootRule ? rootRule.default : '');
  if (nodeRoot === '') {
    if (rootRule && 'required' in rootRule)
      problems.push({ field: 'PODMIN_NODE_ROOT', message: rootRule.required });
  } else if (!path.isAbsolute(nodeRoot)) {
    problems.push({ field: 'PODMIN_NODE_ROOT', message: 'must be an absolute directory' });
  }
  const localSecretsFile = env['PODMIN_LOCAL_SECRETS_FILE'];
  if (localSecretsFile !== undefined && !path.isAbsolute(localSecretsFile)) {
    problems.push({ field: 'PODMIN_LOCAL_SECRETS_FILE', message: 'must be an absolute path' });
  }
  const publish = env['PODMIN_WORKLOAD_CA_PUBLISH'];
  if (publish !== undefined && parseS3ObjectUrl(publish) === undefined) {
    problems.push({ field: 'PODMIN_WORKLOAD_CA_PUBLISH', message: 'must be s3://BUCKET/KEY' });
  }
  const healthAddress = loopbackAddress(
    'PODMIN_AGENT_HEALTH_ADDRESS',
    env['PODMIN_AGENT_HEALTH_ADDRESS'] ?? DEFAULT_HEALTH_ADDRESS,
    problems,
  );
  const registryListen = loopbackAddress(
    'PODMIN_AGENT_REGISTRY_LISTEN',
    env['PODMIN_AGENT_REGISTRY_LISTEN'] ?? DEFAULT_REGISTRY_LISTEN,
    problems,
  );
  const dnsListen = loopbackAddress(
    'PODMIN_AGENT_DNS_LISTEN',
    env['PODMIN_AGENT_DNS_LISTEN'] ?? DEFAULT_DNS_LISTEN,
    problems,
  );
  const nodeAddress = env['PODMIN_NODE_ADDRESS'] ?? rules?.defaultNodeAddress() ?? '::1';
  const nodeId = env['PODMIN_NODE_ID'] ?? rules?.defaultNodeId() ?? os.hostname();
  if (!NODE_ID.test(nodeId))
    problems.push({
      field: 'PODMIN_NODE_ID',
      message: `must be 1-63 characters of a-z, A-Z, 0-9, '.', '_' or '-', not ${JSON.stringify(nodeId)}`,
    });
  const portText = env['PODMIN_AGENT_COORDINATION_PORT'] ?? String(DEFAULT_COORDINATION_PORT);
  const coordinationPort = Number(portText);
  if (!/^\d{1,5}$/.test(portText) || coordinationPort < 1 || coordinationPort > 65535)
    problems.push({
      field: 'PODMIN_AGENT_COORDINATION_PORT',
      message: `must be a TCP port 1-65535, not ${JSON.stringify(portText)}`,
    });
  const kubeletPodsSocket =
    env['PODMIN_KUBELET_PODS_SOCKET'] ?? path.join(nodeRoot || '/', KUBELET_PODS_SOCKET);
  if (!path.isAbsolute(kubeletPodsSocket))
    problems.push({ field: 'PODMIN_KUBELET_PODS_SOCKET', message: 'must be an absolute path' });
  const leaseMs = milliseconds(
    'PODMIN_ELECTION_LEASE_MS',
    env,
    DEFAULT_ELECTION_LEASE_MS,
    problems,
  );
  const pollMs = milliseconds('PODMIN_ELECTION_POLL_MS', env, DEFAULT_ELECTION_POLL_MS, problems);
  if (leaseMs !== undefined && pollMs !== undefined)
    problems.push(...electionTimingProblems(leaseMs, pollMs));
  if (problems.length > 0)
    throw new ValidationError('podmin-agent configuration', problems, {
      code: 'INVALID_ARGUMENT',
    });
  const config: AgentProcessConfig = {
    ...base,
    nodeRoot,
    nodeAddress,
    runtimeDir: path.join(nodeRoot, 'run', 'podmin', 'agent'),
    workloadCaPublish: publish,
    otelLogs: parseOtelLogsSettings(env),
    localSecretsFile: localSecretsFile ?? rules?.defaultSecretsFile(nodeRoot),
    healthAddress: Object.freeze(healthAddress),
    registryListen: Object.freeze(registryListen),
    dnsListen: Object.freeze(dnsListen),
    nodeId,
    coordinationPort,
    kubeletPodsSocket,
    election: Object.freeze({
      leaseMs: leaseMs ?? DEFAULT_ELECTION_LEASE_MS,
      pollMs: pollMs ?? DEFAULT_ELECTION_POLL_MS,
    }),
  };
  return { kind: 'run', config: Object.freeze(config) };
}

/** {@link parseAgentInvocation} for a service process, where `--help` and `--version` are errors. */
export function parseAgentProcessConfig(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  providers: AgentProviderLookup,
): AgentProcessConfig {
  const invocation = parseAgentInvocation(argv, env, providers);
  if (invocation.kind !== 'run')
    throw new ValidationError(
      'podmin-agent configuration',
      [{ field: `--${invocation.kind}`, message: 'is not accepted by a service process' }],
      { code: 'INVALID_ARGUMENT' },
    );
  return invocation.config;
}

/** The same flags as an argument list, for starting a service process. */
export function agentFlagArgs(config: AgentConfig): string[] {
  return [
    '--provider',
    config.provider,
    '--bucket',
    config.bucket,
    '--region',
    config.region,
    '--cluster',
    config.cluster,
    '--nodegroup',
    config.nodegroup,
    '--ipv6-prefix',
    config.ipv6Prefix,
  ];
}

/** `host:port` back from a {@link LoopbackAddress}, bracketing IPv6. */
export function formatAddress(address: LoopbackAddress): string {
  return address.host.includes(':')
    ? `[${address.host}]:${address.port}`
    : `${address.host}:${address.port}`;
}

interface Flags {
  values: Record<string, string | undefined>;
  help: boolean;
  version: boolean;
}

/** Reads `--flag value` / `--flag=value`; unknown flags, missing values and positionals are problems. */
function readFlags(argv: readonly string[], problems: FieldProblem[]): Flags {
  const { values, positionals } = parseArgs({
    args: [...argv],
    strict: false,
    allowPositionals: true,
    options: {
      ...Object.fromEntries(AGENT_FLAGS.map((f) => [f, { type: 'string' as const }])),
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean' },
    },
  });
  const result: Flags = { values: {}, help: values['help'] === true, version: false };
  result.version = values['version'] === true;
  const known = AGENT_FLAGS as readonly string[];
  for (const [flag, value] of Object.entries(values)) {
    if (flag === 'help' || flag === 'version') continue;
    if (!known.includes(flag)) {
      problems.push({
        field: `--${flag}`,
        message: `is not a flag; the agent takes only --${AGENT_FLAGS.join(', --')}`,
      });
    } else if (typeof value !== 'string') {
      problems.push({ field: `--${flag}`, message: 'needs a value' });
    } else {
      result.values[flag] = value;
    }
  }
  if (positionals.length > 0)
    problems.push({
      field: 'arguments',
      message: `takes no positional arguments, got ${JSON.stringify(positionals)}`,
    });
  return result;
}

/** `fallback` when unset; undefined (and a problem) when set but not a duration. */
function milliseconds(
  field: string,
  env: Readonly<Record<string, string | undefined>>,
  fallback: number,
  problems: FieldProblem[],
): number | undefined {
  const text = env[field];
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!/^\d{1,7}$/.test(text) || value < MIN_ELECTION_MS) {
    problems.push({
      field,
      message: `must be a whole number of milliseconds ≥ ${MIN_ELECTION_MS}, not ${JSON.stringify(text)}`,
    });
    return undefined;
  }
  return value;
}

/**
 * The election timing rules together: the poll at most half the lease, and a leader left
 * {@link MIN_LEADER_DUTY_MS} of duties just before its next renew. Each problem states the
 * values, what they derive and the smallest lease that works with this poll.
 */
function electionTimingProblems(leaseMs: number, pollMs: number): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const smallest = minimumElectionLeaseMs(pollMs);
  const halfLease = Math.floor(leaseMs / 2);
  if (pollMs > halfLease)
    problems.push({
      field: 'PODMIN_ELECTION_POLL_MS',
      message:
        `a poll of ${pollMs} ms must be at most half of the lease (PODMIN_ELECTION_LEASE_MS ${leaseMs} ms): ` +
        (halfLease >= MIN_ELECTION_MS ? `use a poll of at most ${halfLease} ms or ` : 'use ') +
        `a lease of at least ${smallest} ms`,
    });
  const margin = renewMarginMs(leaseMs);
  const window = leaderDutyWindowMs(leaseMs, pollMs);
  if (window < MIN_LEADER_DUTY_MS) {
    const left = window > 0 ? `${window} ms` : `no time (${window} ms)`;
    // The longest poll that would do with this lease, when there is one the poll rule allows.
    const longestPoll = Math.min(leaseMs - margin - MIN_LEADER_DUTY_MS, halfLease);
    const orPoll =
      longestPoll >= MIN_ELECTION_MS
        ? ` (or a PODMIN_ELECTION_POLL_MS of at most ${longestPoll} ms)`
        : '';
    problems.push({
      field: 'PODMIN_ELECTION_LEASE_MS',
      message:
        `a lease of ${leaseMs} ms with a poll (PODMIN_ELECTION_POLL_MS) of ${pollMs} ms leaves a leader ${left} ` +
        `of duties before its next renew (lease − renew margin ${margin} ms − poll); ` +
        `leader duties need at least ${MIN_LEADER_DUTY_MS} ms: use a lease of at least ${smallest} ms${orPoll}`,
    });
  }
  return problems;
}

function loopbackAddress(
  field: string,
  value: string,
  problems: FieldProblem[],
): { host: string; port: number } {
  const match = /^(\[::1\]|127(?:\.\d{1,3}){3}):(\d{1,5})$/.exec(value);
  const port = Number(match?.[2]);
  const host = match?.[1]?.replace(/^\[|\]$/g, '');
  const octetsOk = host === '::1' || (host?.split('.').every((o) => Number(o) <= 255) ?? false);
  if (match === null || host === undefined || !octetsOk || port > 65535) {
    problems.push({
      field,
      message: `must be a loopback 127.x.y.z:PORT or [::1]:PORT, not ${JSON.stringify(value)}`,
    });
    return { host: '127.0.0.1', port: 0 };
  }
  return { host, port };
}
