import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  TELEMETRY_CERT_FILE,
  TELEMETRY_DIR,
  TELEMETRY_KEY_FILE,
  TELEMETRY_LINK,
  awsAgentRules,
  checkClusterNodegroup,
  requiredFlag,
} from '@podmin/agent-util-config';
import type { agentAwsClientOptions, ProcessEnv } from '@podmin/agent-data-access-node';
import {
  FLUENT_BIT_STATE_DIR,
  parseOtelHeaders,
  renderFluentBitConfig,
  type FluentBitConfigInput,
} from '@podmin/agent-util-fluent-bit';
import {
  createSecretsManagerClient,
  createSsmClient,
  isSecretProviderName,
  OTEL_LOGS_HEADERS_KEY,
  ParameterStoreSecretStore,
  SecretsManagerSecretStore,
  systemSecretName,
  type SecretStore,
} from '@podmin/data-access-secrets';
import { PodminError, ValidationError, type FieldProblem } from '@podmin/util-errors';
import { writeFileAtomic } from '@podmin/util-fs';
import type { StructuredLogger } from '@podmin/agent-util-logging';

/** The subcommand's name: `podmin-agent otel-logs-config …`. */
export const OTEL_LOGS_CONFIG_COMMAND = 'otel-logs-config';

/** Where the agent keeps the log-export leaf (`otel-logs` link) and the exporter CA bundle. */
export const DEFAULT_TELEMETRY_DIR = `/${TELEMETRY_DIR}`;

const USAGE = `Usage: podmin-agent ${OTEL_LOGS_CONFIG_COMMAND} --provider aws --region R --cluster C --nodegroup NG
         --endpoint https://URL [--protocol http|grpc] [--mtls true|false] [--ca-file PATH]
         [--headers-provider aws-parameter-store|aws-secrets-manager] --out FILE
         [--telemetry-dir DIR] [--state-dir DIR]

Writes the node's Fluent Bit configuration (mode 0600, atomically) before each Fluent Bit start:
the exporter headers are read from /<cluster>/_system/${OTEL_LOGS_HEADERS_KEY} now, and the
log-export leaf is pinned to the generation the ${TELEMETRY_LINK} link selects now.`;

/** The subcommand's validated flags. */
export interface OtelLogsConfigOptions {
  readonly provider: string;
  readonly region: string;
  readonly cluster: string;
  readonly nodegroup: string;
  readonly endpoint: string;
  readonly protocol: 'http' | 'grpc';
  readonly mtls: boolean;
  readonly caFile: string | undefined;
  readonly headersProvider: 'aws-parameter-store' | 'aws-secrets-manager' | undefined;
  readonly out: string;
  readonly telemetryDir: string;
  readonly stateDir: string;
}

const FLAGS = [
  'provider',
  'region',
  'cluster',
  'nodegroup',
  'endpoint',
  'protocol',
  'mtls',
  'ca-file',
  'headers-provider',
  'out',
  'telemetry-dir',
  'state-dir',
] as const;

/** Parses the subcommand's flags, listing every bad one; `help` for --help. */
export function parseOtelLogsConfigArgs(argv: readonly string[]): OtelLogsConfigOptions | 'help' {
  const problems: FieldProblem[] = [];
  const { values, positionals } = parseArgs({
    args: [...argv],
    strict: false,
    allowPositionals: true,
    options: {
      ...Object.fromEntries(FLAGS.map((f) => [f, { type: 'string' as const }])),
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values['help'] === true) return 'help';
  const flags: Record<string, string> = {};
  for (const [flag, value] of Object.entries(values)) {
    if (!(FLAGS as readonly string[]).includes(flag)) {
      problems.push({
        field: `--${flag}`,
        message: `is not a flag of ${OTEL_LOGS_CONFIG_COMMAND}`,
      });
    } else if (typeof value !== 'string' || value === '') {
      problems.push({ field: `--${flag}`, message: 'needs a value' });
    } else {
      flags[flag] = value;
    }
  }
  if (positionals.length > 0)
    problems.push({
      field: 'arguments',
      message: `takes no positional arguments, got ${JSON.stringify(positionals)}`,
    });
  const required = (flag: (typeof FLAGS)[number]): string => requiredFlag(flags, flag, problems);
  const provider = required('provider');
  const region = required('region');
  const cluster = required('cluster');
  const nodegroup = required('nodegroup');
  const endpoint = required('endpoint');
  const out = required('out');
  // Only AWS nodes export logs: the local provider refuses --otel-logs (`podmin logs` reads
  // the node's files instead).
  if (provider && provider !== 'aws')
    problems.push({ field: '--provider', message: 'must be aws (only AWS nodes export logs)' });
  const badRegion = region ? awsAgentRules.checkRegion(region) : undefined;
  if (badRegion) problems.push({ field: '--region', message: badRegion });
  checkClusterNodegroup(cluster, nodegroup, problems);
  const protocol = flags['protocol'] ?? 'http';
  if (protocol !== 'http' && protocol !== 'grpc')
    problems.push({
      field: '--protocol',
      message: `must be http or grpc, not ${JSON.stringify(protocol)}`,
    });
  const mtls = flags['mtls'] ?? 'false';
  if (mtls !== 'true' && mtls !== 'false')
    problems.push({
      field: '--mtls',
      message: `must be true or false, not ${JSON.stringify(mtls)}`,
    });
  const headersProvider = flags['headers-provider'];
  if (headersProvider !== undefined && !isSecretProviderName(headersProvider))
    problems.push({
      field: '--headers-provider',
      message: 'must be aws-parameter-store or aws-secrets-manager',
    });
  for (const flag of ['ca-file', 'out', 'telemetry-dir', 'state-dir'] as const) {
    const value = flags[flag];
    if (value !== undefined && !path.isAbsolute(value))
      problems.push({ field: `--${flag}`, message: 'must be an absolute path' });
  }
  if (problems.length > 0)
    throw new ValidationError(`podmin-agent ${OTEL_LOGS_CONFIG_COMMAND}`, problems, {
      code: 'INVALID_ARGUMENT',
    });
  return Object.freeze({
    provider,
    region,
    cluster,
    nodegroup,
    endpoint,
    protocol: protocol as 'http' | 'grpc',
    mtls: mtls === 'true',
    caFile: flags['ca-file'],
    headersProvider: headersProvider as OtelLogsConfigOptions['headersProvider'],
    out,
    telemetryDir: flags['telemetry-dir'] ?? DEFAULT_TELEMETRY_DIR,
    stateDir: flags['state-dir'] ?? FLUENT_BIT_STATE_DIR,
  });
}

/**
 * Reads what the configuration needs at this moment (the headers secret, the current leaf
 * generation, the CA bundle's presence) and renders it; nothing is written on any failure.
 */
export async function buildOtelLogsConfig(
  options: OtelLogsConfigOptions,
  env: ProcessEnv,
  awsClientOptions: typeof agentAwsClientOptions,
  hostname: string = os.hostname(),
): Promise<string> {
  const input: { -readonly [K in keyof FluentBitConfigInput]: FluentBitConfigInput[K] } = {
    endpoint: options.endpoint,
    protocol: options.protocol,
    cluster: options.cluster,
    nodegroup: options.nodegroup,
    hostname,
    stateDir: options.stateDir,
  };
  if (options.caFile !== undefined) {
    // The agent installs it at start; until then Fluent Bit could not verify the exporter.
    await assertReadableFile(options.caFile, 'the exporter CA bundle (ca=)');
    input.caFile = options.caFile;
  }
  if (options.mtls) {
    // Pinned to the generation the link selects now: a renewal swaps the link, and the agent
    // restarts Fluent Bit, which regenerates this file onto the new generation.
    const link = path.join(options.telemetryDir, TELEMETRY_LINK);
    let generation: string;
    try {
      generation = await fs.realpath(link);
    } catch (err) {
      throw new PodminError(
        'NOT_FOUND',
        `resolving the log-export leaf ${link}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
        { cause: err, hint: 'podmin-agent issues it at start (mtls=true); Fluent Bit retries' },
      );
    }
    const certFile = path.join(generation, TELEMETRY_CERT_FILE);
    const keyFile = path.join(generation, TELEMETRY_KEY_FILE);
    await assertReadableFile(certFile, 'the log-export leaf certificate');
    await assertReadableFile(keyFile, 'the log-export leaf key');
    input.clientCertificate = { certFile, keyFile };
  }
  if (options.headersProvider !== undefined) {
    const name = systemSecretName(options.cluster, OTEL_LOGS_HEADERS_KEY);
    let value: Buffer;
    try {
      value = await headersStore(
        options.headersProvider,
        options.region,
        env,
        awsClientOptions,
      ).get(name);
    } catch (err) {
      const code = err instanceof PodminError ? err.code : 'IO_ERROR';
      throw new PodminError(
        code,
        `reading ${name} from ${options.headersProvider}: ${(err as Error).message}`,
        {
          cause: err,
          hint: `headers-secret=true needs it: podmin secret create ${OTEL_LOGS_HEADERS_KEY} --system`,
        },
      );
    }
    input.headers = parseOtelHeaders(value, name);
  }
  return renderFluentBitConfig(input);
}

/**
 * The store the headers live in, on the endpoint every agent AWS client uses (regional
 * dual-stack, or AWS_ENDPOINT_URL_*). Built here rather than through the node's store openers:
 * this module is loaded only for the subcommand, and importing the openers here would make the
 * supervisor bundle evaluate every store adapter when it starts.
 */
function headersStore(
  provider: 'aws-parameter-store' | 'aws-secrets-manager',
  region: string,
  env: ProcessEnv,
  awsClientOptions: typeof agentAwsClientOptions,
): Pick<SecretStore, 'get'> {
  return provider === 'aws-parameter-store'
    ? new ParameterStoreSecretStore(createSsmClient(awsClientOptions('SSM', region, env)))
    : new SecretsManagerSecretStore(
        createSecretsManagerClient(awsClientOptions('SECRETS_MANAGER', region, env)),
      );
}

async function assertReadableFile(file: string, what: string): Promise<void> {
  try {
    const st = await fs.stat(file);
    if (!st.isFile()) throw Object.assign(new Error('not a regular file'), { code: 'EISDIR' });
  } catch (err) {
    throw new PodminError(
      'NOT_FOUND',
      `reading ${what} ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
      { cause: err, hint: 'podmin-agent installs it; Fluent Bit retries' },
    );
  }
}

/**
 * `podmin-agent otel-logs-config`: writes the configuration atomically (mode 0600) and exits 0;
 * 2 on bad flags (with the usage), 1 when anything it reads is missing or refused: the previous
 * file is then kept, and systemd does not start Fluent Bit. Logs one JSON line per outcome.
 */
export async function runOtelLogsConfig(
  argv: readonly string[],
  env: ProcessEnv,
  log: StructuredLogger,
  awsClientOptions: typeof agentAwsClientOptions,
): Promise<number> {
  let options: ReturnType<typeof parseOtelLogsConfigArgs>;
  try {
    options = parseOtelLogsConfigArgs(argv);
  } catch (err) {
    const message = (err as Error).message;
    log.event('error', 'invalid configuration', { error: message });
    process.stderr.write(`podmin-agent: ${message}\n\n${USAGE}\n`);
    return 2;
  }
  if (options === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  try {
    const config = await buildOtelLogsConfig(options, env, awsClientOptions);
    await writeFileAtomic(options.out, config, { mode: 0o600, dirMode: 0o700 });
    log.event('info', 'write fluent-bit config', {
      out: options.out,
      protocol: options.protocol,
      mtls: options.mtls,
      ca: options.caFile !== undefined,
      headers: options.headersProvider !== undefined,
    });
    return 0;
  } catch (err) {
    log.event('error', 'write fluent-bit config', {
      out: options.out,
      error: (err as Error).message,
      ...(err instanceof PodminError ? { code: err.code, hint: err.hint } : {}),
    });
    return 1;
  }
}
