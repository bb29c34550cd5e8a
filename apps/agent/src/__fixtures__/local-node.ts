// One node of the local provider for specs that run the built agent: a bucket directory, a node
// root and the secrets `podmin setup` seeds, all in one temporary directory, and the agent
// started on free loopback ports and awaited until ready.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LocalSecretStore } from '@podmin/data-access-secrets';
import {
  localAgentArgs,
  seedClusterSecrets,
  startBuiltAgent,
  waitFor,
  type BuiltAgent,
  type BuiltAgentOptions,
  type StartedAgent,
} from '@podmin/testing';

/** The service processes the supervisor runs, by the `service` field of their log lines, sorted. */
export const AGENT_SERVICE_PROCESSES: readonly string[] = [
  'agent-coordinator',
  'agent-dataplane',
  'agent-dns',
  'agent-identity',
  'agent-registry',
  'agent-staticpod',
];

/** A local-provider node on disk for one or more built agents. */
export interface LocalNode {
  /** The temporary directory holding everything below. */
  dir: string;
  /** The local bucket (`--bucket`). */
  bucket: string;
  /** The first agent's node root. */
  nodeRoot: string;
  /** The secrets file, seeded for cluster `demo`. */
  secretsFile: string;
  /** The store on {@link secretsFile}, for secrets a test adds later. */
  secrets: LocalSecretStore;
  /** The environment that points an agent at {@link secretsFile}. */
  env: Record<string, string>;
  /** A further empty directory in {@link dir} (another node's root, say). */
  subdir(name: string): string;
  /** Removes {@link dir} and everything in it; safe to call twice. */
  cleanup(): void;
}

/**
 * Creates a {@link LocalNode} whose secrets file holds what `podmin setup` stores create-only
 * before the agent starts, plus `extraSecrets` (parameter name → value).
 */
export async function makeLocalNode(
  prefix: string,
  extraSecrets: Record<string, string> = {},
): Promise<LocalNode> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${prefix}-`));
  const subdir = (name: string): string => {
    const p = path.join(dir, name);
    fs.mkdirSync(p, { recursive: true });
    return p;
  };
  const secretsFile = path.join(subdir('secrets'), 'demo.json');
  const secrets = new LocalSecretStore({ file: secretsFile, provider: 'aws-parameter-store' });
  await seedClusterSecrets(secrets, 'demo', extraSecrets);
  return {
    dir,
    bucket: subdir('bucket'),
    nodeRoot: subdir('node'),
    secretsFile,
    secrets,
    env: { PODMIN_LOCAL_SECRETS_FILE: secretsFile },
    subdir,
    cleanup: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

/** What {@link startLocalAgent} varies: everything of {@link BuiltAgentOptions} but the ports. */
export type LocalAgentOptions = Partial<Omit<BuiltAgentOptions, 'ports'>>;

/**
 * Starts the built agent on `node` (its bucket, node root and secrets, unless `options` says
 * otherwise) on free loopback ports.
 */
export function startLocalAgent(
  node: LocalNode,
  options: LocalAgentOptions = {},
): Promise<StartedAgent> {
  return startBuiltAgent({
    args: localAgentArgs(node.bucket),
    nodeRoot: node.nodeRoot,
    ...options,
    env: { ...node.env, ...options.env },
  });
}

/** One agent service as /readyz and /healthz list it. */
export interface ServiceHealth {
  name: string;
  pid: number;
  restarts: number;
  healthy: boolean | null;
  detail: string | null;
}

/**
 * Waits for the agent's /readyz on `healthPort` to answer 200 and returns its services; on a
 * timeout the agent's last output goes to stderr, so the failure shows why it never got ready.
 */
export async function waitReady(
  agent: BuiltAgent,
  healthPort: number,
  timeoutMs?: number,
): Promise<ServiceHealth[]> {
  let last = '';
  return waitFor(
    async () => {
      const res = await fetch(`http://127.0.0.1:${healthPort}/readyz`).catch(() => undefined);
      if (res === undefined) return undefined;
      last = await res.text();
      return res.status === 200
        ? (JSON.parse(last) as { services: ServiceHealth[] }).services
        : undefined;
    },
    'readiness',
    timeoutMs,
  ).catch((err: unknown) => {
    process.stderr.write(`${last}\n${agent.tail(20)}\n`);
    throw err;
  });
}
