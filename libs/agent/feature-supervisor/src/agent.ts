import fs from 'node:fs';
import path from 'node:path';
import {
  DEFAULT_HEALTH_ADDRESS,
  DNS_TTL_MARGIN_MS,
  agentFlagArgs,
  formatAddress,
  parseAgentInvocation,
  type AgentInvocation,
  type AgentProcessConfig,
} from '@podmin/agent-util-config';
import { scheduleCleanPageRelease, type CleanPageSchedule } from '@podmin/agent-data-access-memory';
import {
  AGENT_PROVIDERS,
  agentAwsClientOptions,
  agentProviderOf,
} from '@podmin/agent-data-access-node';
import { JsonLogger } from '@podmin/agent-util-logging';
import { startHealthServer } from './health-server';
import { SHORT_SLICE_NS } from './scheduling';
import { Supervisor, type BackoffPolicy, type MemoryProfile, type ServiceSpec } from './supervisor';

export { DEFAULT_HEALTH_ADDRESS };

/** Where the supervisor finds its service programs (development and tests only). */
export interface AgentEnvironment {
  /** Directory holding the service bundles (default: beside this program). */
  serviceDir?: string;
  /** The process environment the configuration is read from (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  /** When the supervisor gives back start-up's clean file pages; `false` never (in-process tests). */
  cleanPages?: CleanPageSchedule | false;
}

const USAGE = `Usage: podmin-agent --provider aws|local --bucket B --region R --cluster C --nodegroup NG --ipv6-prefix P/80

Runs the node agent: validates its configuration, then starts and supervises the service
processes, serving aggregated health on http://${DEFAULT_HEALTH_ADDRESS}/healthz and /readyz.

       podmin-agent otel-logs-config --help
Writes the node's Fluent Bit configuration (setup --otel-logs) and exits.`;

/**
 * The coordinator's niceness: its snapshot computation (about 100 ms per 1,000 Services) is
 * background work, and on a 2-vCPU node it must not delay DNS answers (bench/dns.mjs).
 */
export const COORDINATOR_NICE = 10;

/**
 * The DNS TTL margin of the shutdown, derived from `DNS_TTL_SECONDS` in the agent's constants
 * (agent-dns answers with that TTL), re-exported here where the shutdown order uses it.
 */
export { DNS_TTL_MARGIN_MS };

/**
 * The service processes the agent supervises, with their shutdown order; each gets the same flags
 * and the same start environment `env` (node facts the provider read once).
 */
export function serviceSpecs(
  config: AgentProcessConfig,
  dir: string,
  env: Readonly<Record<string, string>> = {},
): ServiceSpec[] {
  const args = agentFlagArgs(config);
  const spec = (name: string, stopOrder: number, memory: MemoryProfile): ServiceSpec => ({
    name,
    script: path.join(dir, `agent-${name}.cjs`),
    args,
    ...(Object.keys(env).length > 0 ? { env } : {}),
    stopOrder,
    memory,
  });
  // Stop order is the spec's: reconciliation first, then the coordinator (it tells the leader
  // this node's endpoints are leaving and waits for its acknowledgement), then the DNS TTL
  // margin, then DNS and the services Pods depend on, and the dataplane last, so Service flows keep working until everything else is down. Processes
  // that act a few times per poll interval run lean; the registry (blobs), DNS (queries) and
  // the dataplane keep the optimizing compiler (supervisor.ts has the measurements; programming
  // 10,000 Services × 3 backends takes about 0.6 s with it and 1.8 s in lite mode, over the
  // 1 s budget of bench/dataplane.mjs).
  return [
    { ...spec('staticpod', 10, 'lean'), readyAfterHealthy: true },
    {
      ...spec('coordinator', 20, 'lean'),
      nice: COORDINATOR_NICE,
      pauseAfterStop: { ms: DNS_TTL_MARGIN_MS, why: 'wait DNS TTL margin' },
    },
    { ...spec('dns', 30, 'fast'), sliceNs: SHORT_SLICE_NS },
    spec('identity', 60, 'lean'),
    spec('registry', 50, 'fast'),
    spec('dataplane', 70, 'fast'),
  ];
}

/** Parses the agent's flags and environment with the one agent parser; throws listing every bad value. */
export function parseAgentArgs(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>> = process.env,
): AgentProcessConfig | 'help' | 'version' {
  const invocation: AgentInvocation = parseAgentInvocation(argv, env, AGENT_PROVIDERS);
  return invocation.kind === 'run' ? invocation.config : invocation.kind;
}

/**
 * Runs podmin-agent: validate configuration (exit 2 listing every bad flag), start services,
 * serve health, and on SIGTERM/SIGINT stop services in order and exit.
 */
export async function runAgent(
  argv: readonly string[],
  options: AgentEnvironment,
  version: string,
  log: JsonLogger = new JsonLogger({ service: 'podmin-agent' }),
  backoff?: BackoffPolicy,
): Promise<number> {
  // A one-shot subcommand (Fluent Bit's ExecStartPre), loaded only when asked for: the
  // supervisor itself never loads the secret stores it reads.
  if (argv[0] === 'otel-logs-config') {
    const { runOtelLogsConfig } = await import('./otel-logs-config');
    return runOtelLogsConfig(argv.slice(1), options.env ?? process.env, log, agentAwsClientOptions);
  }
  let parsed: ReturnType<typeof parseAgentArgs>;
  try {
    parsed = parseAgentArgs(argv, options.env ?? process.env);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    log.event('error', 'invalid configuration', { error: message });
    process.stderr.write(`podmin-agent: ${message}\n\n${USAGE}\n`);
    return 2;
  }
  if (parsed === 'help') {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  if (parsed === 'version') {
    process.stdout.write(version + '\n');
    return 0;
  }
  const env = options.env ?? process.env;
  // Read once here, so every service process agrees on the node's facts (aws: IMDS).
  let startEnv: Readonly<Record<string, string>>;
  let config: AgentProcessConfig;
  try {
    startEnv = (await agentProviderOf(parsed).startEnvironment?.(env)) ?? {};
    const reparsed =
      Object.keys(startEnv).length > 0 ? parseAgentArgs(argv, { ...env, ...startEnv }) : parsed;
    if (typeof reparsed === 'string') throw new Error(`unexpected ${reparsed}`);
    config = reparsed;
  } catch (err) {
    log.event('error', 'read node facts', {
      error: err instanceof Error ? err.message : String(err),
    });
    return 1;
  }
  if (Object.keys(startEnv).length > 0)
    log.event('info', 'read node facts', {
      nodeAddress: config.nodeAddress,
      nodeId: config.nodeId,
      variables: Object.keys(startEnv).sort().join(','),
    });
  const dir = options.serviceDir ?? __dirname;
  const specs = serviceSpecs(config, dir, startEnv);
  const missing = specs.filter((s) => !fs.existsSync(s.script)).map((s) => s.script);
  if (missing.length > 0) {
    log.event('error', 'missing service programs', { missing: missing.join(', ') });
    return 1;
  }
  log.event('info', 'start agent', {
    version,
    provider: config.provider,
    cluster: config.cluster,
    nodegroup: config.nodegroup,
    ipv6Prefix: config.ipv6Prefix,
    nodeAddress: config.nodeAddress,
  });
  const supervisor = new Supervisor(specs, log, backoff);
  const health = config.healthAddress;
  const server = await startHealthServer(supervisor, health.port, health.host, {
    cluster: config.cluster,
    nodegroup: config.nodegroup,
    nodeRoot: config.nodeRoot,
    pid: process.pid,
    version,
  });
  log.event('info', 'serve health', { address: formatAddress({ ...health, port: server.port }) });
  supervisor.start();
  const cancelRelease =
    options.cleanPages === false
      ? () => undefined
      : scheduleCleanPageRelease(
          (level, msg, fields) => log.event(level, msg, fields),
          options.cleanPages,
        );
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  log.event('info', 'shut down', { signal });
  cancelRelease();
  await supervisor.stop();
  await server.close();
  log.event('info', 'stopped');
  return 0;
}
