import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { AGENT_FLAGS, parseAgentConfig, type AgentConfig } from '@podmin/agent-util-config';
import { PodminError, ValidationError } from '@podmin/util-errors';
import { startHealthServer } from './health-server';
import { createJsonLogger, type JsonLogger } from './json-log';
import { Supervisor, type BackoffPolicy, type ServiceSpec } from './supervisor';

/** Loopback address of the aggregated health endpoints. */
export const DEFAULT_HEALTH_ADDRESS = '127.0.0.1:9440';

/** Environment knobs for development and tests only (the agent's configuration is its six flags). */
export interface AgentEnvironment {
  /** `host:port` of the health server (default 127.0.0.1:9440); host must be loopback. */
  healthAddress?: string;
  /** `host:port` the registry listens on (default 127.0.0.1:5000). */
  registryListen?: string;
  /** Directory holding the service bundles (default: beside this program). */
  serviceDir?: string;
  /** The node root (PODMIN_NODE_ROOT), reported by `/identity`; the services default it to `/`. */
  nodeRoot?: string;
}

const USAGE = `Usage: podmin-agent --provider aws|local --bucket B --region R --cluster C --nodegroup NG --ipv6-prefix P/80

Runs the node agent: validates its configuration, then starts and supervises the service
processes, serving aggregated health on http://${DEFAULT_HEALTH_ADDRESS}/healthz and /readyz.`;

/** The service processes the agent supervises, with their shutdown order. */
export function serviceSpecs(
  config: AgentConfig,
  dir: string,
  env: AgentEnvironment,
): ServiceSpec[] {
  const common = [
    '--provider',
    config.provider,
    '--bucket',
    config.bucket,
    '--region',
    config.region,
    '--cluster',
    config.cluster,
  ];
  return [
    // Stop order is the spec's: reconciliation first, then the services Pods depend on.
    {
      name: 'staticpod',
      script: path.join(dir, 'agent-staticpod.cjs'),
      args: [...common, '--nodegroup', config.nodegroup, '--ipv6-prefix', config.ipv6Prefix],
      stopOrder: 10,
    },
    {
      name: 'identity',
      script: path.join(dir, 'agent-identity.cjs'),
      args: [...common, '--nodegroup', config.nodegroup, '--ipv6-prefix', config.ipv6Prefix],
      stopOrder: 60,
    },
    {
      name: 'registry',
      script: path.join(dir, 'agent-registry.cjs'),
      args: [...common, '--listen', env.registryListen ?? '127.0.0.1:5000'],
      stopOrder: 50,
    },
  ];
}

/** Parses the agent's flags; a ValidationError lists every bad one. */
export function parseAgentArgs(argv: readonly string[]): AgentConfig | 'help' | 'version' {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        ...Object.fromEntries(AGENT_FLAGS.map((f) => [f, { type: 'string' as const }])),
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean' },
      },
    }));
  } catch (err) {
    throw new ValidationError(
      'podmin-agent arguments',
      [
        {
          field: 'arguments',
          message: `${(err as Error).message}; the agent takes only --${AGENT_FLAGS.join(', --')}`,
        },
      ],
      {
        code: 'INVALID_ARGUMENT',
      },
    );
  }
  if (values['help']) return 'help';
  if (values['version']) return 'version';
  return parseAgentConfig(values as Record<string, string | undefined>);
}

function splitAddress(value: string, what: string): { host: string; port: number } {
  const m = /^(127\.\d+\.\d+\.\d+|\[::1\]):(\d{1,5})$/.exec(value);
  const port = m ? Number(m[2]) : NaN;
  if (!m || port > 65535)
    throw new PodminError(
      'INVALID_ARGUMENT',
      `${what} ${JSON.stringify(value)}: must be a loopback host:port`,
    );
  return { host: (m[1] as string).replace(/^\[|\]$/g, ''), port };
}

/**
 * Runs podmin-agent: validate configuration (exit 2 listing every bad flag), start services,
 * serve health, and on SIGTERM/SIGINT stop services in order and exit.
 */
export async function runAgent(
  argv: readonly string[],
  env: AgentEnvironment,
  version: string,
  log: JsonLogger = createJsonLogger('podmin-agent'),
  backoff?: BackoffPolicy,
): Promise<number> {
  let parsed: ReturnType<typeof parseAgentArgs>;
  try {
    parsed = parseAgentArgs(argv);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    log.error('invalid configuration', { error: message });
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
  const config = parsed;
  const dir = env.serviceDir ?? __dirname;
  const specs = serviceSpecs(config, dir, env);
  const missing = specs.filter((s) => !fs.existsSync(s.script)).map((s) => s.script);
  if (missing.length > 0) {
    log.error('missing service programs', { missing: missing.join(', ') });
    return 1;
  }
  const health = splitAddress(env.healthAddress ?? DEFAULT_HEALTH_ADDRESS, 'health address');
  log.info('start agent', {
    version,
    provider: config.provider,
    cluster: config.cluster,
    nodegroup: config.nodegroup,
    ipv6Prefix: config.ipv6Prefix,
  });
  const supervisor = new Supervisor(specs, log, backoff);
  const server = await startHealthServer(supervisor, health.port, health.host, {
    cluster: config.cluster,
    nodegroup: config.nodegroup,
    nodeRoot: env.nodeRoot ?? '/',
    pid: process.pid,
    version,
  });
  log.info('serve health', { address: `${health.host}:${server.port}` });
  supervisor.start();
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  log.info('shut down', { signal });
  await supervisor.stop();
  await server.close();
  log.info('stopped');
  return 0;
}
