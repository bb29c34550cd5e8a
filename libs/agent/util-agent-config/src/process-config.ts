import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { AGENT_FLAGS, parseAgentConfig, type AgentConfig } from './agent-config';
import { ValidationError, type FieldProblem } from '@podmin/util-errors';

/** Configuration of an agent service process: the agent's six flags plus node facts. */
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
}

/** First global or unique-local IPv6 address of this host, else the loopback address. */
export function discoverNodeAddress(interfaces = os.networkInterfaces()): string {
  for (const list of Object.values(interfaces)) {
    for (const a of list ?? []) {
      if (a.family === 'IPv6' && !a.internal && !a.address.toLowerCase().startsWith('fe80'))
        return a.address;
    }
  }
  return '::1';
}

/**
 * Validates the process configuration once, listing every bad value: the six flags, and
 * PODMIN_NODE_ROOT / PODMIN_NODE_ADDRESS / PODMIN_LOCAL_SECRETS_FILE from the environment.
 */
export function parseAgentProcessConfig(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): AgentProcessConfig {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    options: Object.fromEntries(AGENT_FLAGS.map((f) => [f, { type: 'string' as const }])),
  });
  const base = parseAgentConfig(values);
  const problems: FieldProblem[] = [];
  // A VM's node root is `/`; the local provider must name its own directory so a development
  // machine's /etc and /run are never written by accident.
  const nodeRoot = env['PODMIN_NODE_ROOT'] ?? (base.provider === 'aws' ? '/' : '');
  if (nodeRoot === '') {
    problems.push({
      field: 'PODMIN_NODE_ROOT',
      message: 'is required for the local provider (`podmin setup` sets it)',
    });
  } else if (!path.isAbsolute(nodeRoot)) {
    problems.push({ field: 'PODMIN_NODE_ROOT', message: 'must be an absolute directory' });
  }
  const localSecretsFile = env['PODMIN_LOCAL_SECRETS_FILE'];
  if (localSecretsFile !== undefined && !path.isAbsolute(localSecretsFile)) {
    problems.push({ field: 'PODMIN_LOCAL_SECRETS_FILE', message: 'must be an absolute path' });
  }
  const publish = env['PODMIN_WORKLOAD_CA_PUBLISH'];
  if (publish !== undefined && !/^s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]\/\S+$/.test(publish)) {
    problems.push({ field: 'PODMIN_WORKLOAD_CA_PUBLISH', message: 'must be s3://BUCKET/KEY' });
  }
  if (problems.length > 0)
    throw new ValidationError('agent process configuration', problems, {
      code: 'INVALID_ARGUMENT',
    });
  return Object.freeze({
    ...base,
    nodeRoot,
    nodeAddress: env['PODMIN_NODE_ADDRESS'] ?? discoverNodeAddress(),
    runtimeDir: path.join(nodeRoot, 'run', 'podmin', 'agent'),
    workloadCaPublish: publish,
    localSecretsFile:
      localSecretsFile ??
      (base.provider === 'local'
        ? path.join(nodeRoot, 'var', 'lib', 'podmin', 'secrets.json')
        : undefined),
  });
}
