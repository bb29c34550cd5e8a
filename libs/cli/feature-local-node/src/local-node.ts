import { isDnsLabel, parseS3ObjectUrl } from '@podmin/util-names';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { PodminError, ValidationError } from '@podmin/util-errors';
import type { ClusterContext } from '@podmin/cli-util-config';
import { writeFileAtomic } from '@podmin/util-fs';
import type { Reporter } from '@podmin/cli-util-io';
import { probeHealth, type ReportedAgent } from './agent-health';
import { healthAddressTaken } from './health-address-taken';
import { listeningPids } from './listening-pids';
import { localNodeLayout, localPodPrefix, type LocalNodeLayout } from './node-layout';
import { alive, stopProcess } from './process-control';

/** Inputs of local setup and teardown. */
export interface LocalNodeOptions {
  context: ClusterContext;
  nodegroup: string;
  dataDir: string;
  /** The bundled podmin-agent program. */
  agentProgram: string;
  /** File-backed secret store of the local provider. */
  secretsFile: string;
  /** Loopback `host:port` of the agent's health endpoints. */
  healthAddress: string;
  /** Loopback `host:port` of the agent's registry. */
  registryListen: string;
  /** Loopback `host:port` of the agent's Service DNS (CoreDNS forwards svc.cluster.local there). */
  dnsListen: string;
  /** TCP port of the agent's coordination gRPC on the node address (the agent's default 8081). */
  coordinationPort?: string;
  /** How long to wait for the agent to become ready. */
  readyTimeoutMs?: number;
  /** `s3://BUCKET/KEY` where the leader keeps the workload CA bundle (`--workload-ca-publish`). */
  workloadCaPublish?: string;
  /** The node address the agent uses (Pods' DNS server, identity IP SAN); discovered when absent. */
  nodeAddress?: string;
}

/** What the recorded agent was started with; a difference means restart. */
interface AgentState {
  pid: number;
  args: string[];
  env: Record<string, string>;
}

/** The agent a previous setup recorded, when that process still runs. */
async function readState(file: string): Promise<AgentState | undefined> {
  try {
    const state = JSON.parse(await fsp.readFile(file, 'utf8')) as AgentState;
    return Number.isInteger(state.pid) && alive(state.pid) ? state : undefined;
  } catch {
    return undefined;
  }
}

/** What a log holds from byte `from` on (what the current run wrote). */
function logSince(file: string, from: number): string {
  try {
    return fs.readFileSync(file).subarray(from).toString('utf8').trimEnd();
  } catch {
    return '';
  }
}

/** The last lines of a log from byte `from` on. */
function tail(file: string, from = 0, lines = 15): string {
  const text = logSince(file, from);
  return text === '' ? '(no log)' : text.split('\n').slice(-lines).join('\n');
}

/** Stops an agent this module started: SIGTERM, then SIGKILL after 15 s. */
function stopAgent(pid: number): Promise<void> {
  return stopProcess(pid, 15_000);
}

/** Refuses a NodeGroup name or `--workload-ca-publish` value the agent would not take. */
function checkLocalNodeOptions(options: LocalNodeOptions): void {
  if (!isDnsLabel(options.nodegroup)) {
    throw new ValidationError(
      'setup',
      [
        {
          field: '--nodegroup',
          message: `${JSON.stringify(options.nodegroup)} must be a DNS-1123 label`,
        },
      ],
      { code: 'INVALID_ARGUMENT' },
    );
  }
  if (
    options.workloadCaPublish !== undefined &&
    parseS3ObjectUrl(options.workloadCaPublish) === undefined
  ) {
    throw new ValidationError(
      'setup',
      [
        {
          field: '--workload-ca-publish',
          message: `${JSON.stringify(options.workloadCaPublish)} must be s3://BUCKET/KEY`,
        },
      ],
      { code: 'INVALID_ARGUMENT' },
    );
  }
}

/** The agent's command line and environment for this node (compared to decide a restart). */
function agentCommand(
  options: LocalNodeOptions,
  layout: LocalNodeLayout,
): { args: string[]; env: Record<string, string> } {
  const { context, nodegroup } = options;
  const args = [
    options.agentProgram,
    '--provider',
    'local',
    '--bucket',
    context.bucket,
    '--region',
    'local',
    '--cluster',
    context.cluster,
    '--nodegroup',
    nodegroup,
    '--ipv6-prefix',
    localPodPrefix(context.cluster, nodegroup),
  ];
  const env: Record<string, string> = {
    PODMIN_NODE_ROOT: layout.root,
    PODMIN_LOCAL_SECRETS_FILE: options.secretsFile,
    PODMIN_AGENT_HEALTH_ADDRESS: options.healthAddress,
    PODMIN_AGENT_REGISTRY_LISTEN: options.registryListen,
    PODMIN_AGENT_DNS_LISTEN: options.dnsListen,
    // Without the node stack there is no node address of its own: coordinate on loopback.
    PODMIN_NODE_ADDRESS: options.nodeAddress ?? '::1',
    ...(options.coordinationPort
      ? { PODMIN_AGENT_COORDINATION_PORT: options.coordinationPort }
      : {}),
    ...(options.workloadCaPublish ? { PODMIN_WORKLOAD_CA_PUBLISH: options.workloadCaPublish } : {}),
  };
  return { args, env };
}

/** The agent just spawned: its pid, how it exited (once it has) and where its log starts. */
interface SpawnedAgent {
  pid: number;
  exited: () => string | undefined;
  logStart: number;
}

/** Starts the agent detached, logging to the node's log, and records its pid and command. */
async function spawnAgent(
  program: string,
  layout: LocalNodeLayout,
  command: { args: string[]; env: Record<string, string> },
): Promise<SpawnedAgent> {
  const { args, env } = command;
  for (const dir of [
    layout.manifests,
    layout.workloads,
    path.dirname(layout.logFile),
    path.dirname(layout.pidFile),
  ]) {
    await fsp.mkdir(dir, { recursive: true, mode: 0o755 });
  }
  const log = fs.openSync(layout.logFile, 'a', 0o600);
  const logStart = fs.fstatSync(log).size;
  const child = spawn(process.execPath, args, {
    detached: true,
    stdio: ['ignore', log, log],
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: process.env['HOME'] ?? '/', ...env },
  });
  fs.closeSync(log);
  const pid = child.pid;
  if (pid === undefined)
    throw new PodminError('IO_ERROR', `starting ${program}: no process was created`);
  let exited: string | undefined;
  child.once('exit', (code, signal) => (exited = signal ?? `code ${code ?? '?'}`));
  child.unref();
  await writeFileAtomic(layout.pidFile, `${pid}\n`, { mode: 0o644 });
  await writeFileAtomic(layout.stateFile, JSON.stringify({ pid, args, env }, null, 2) + '\n', {
    mode: 0o600,
  });
  return { pid, exited: () => exited, logStart };
}

/**
 * Polls `/readyz` until the agent just started answers ready. Fails (after stopping it and
 * removing its records) when another program answers on the health address, when the agent
 * exits, or when it is not ready by the deadline.
 */
async function awaitAgentReady(
  options: LocalNodeOptions,
  layout: LocalNodeLayout,
  agent: SpawnedAgent,
): Promise<void> {
  const { pid, logStart } = agent;
  // Only the agent just started counts as ready: an agent of another cluster (or one left
  // over) on the same address would answer /readyz while this one dies of EADDRINUSE.
  const own = (a: ReportedAgent) =>
    a.pid === pid && a.cluster === options.context.cluster && a.nodeRoot === layout.root;
  const abandon = async () => {
    if (agent.exited() === undefined) await stopAgent(pid);
    await fsp.rm(layout.stateFile, { force: true });
    await fsp.rm(layout.pidFile, { force: true });
  };
  const self = {
    cluster: options.context.cluster,
    nodegroup: options.nodegroup,
    dataDir: options.dataDir,
  };
  const healthPort = Number(
    options.healthAddress.slice(options.healthAddress.lastIndexOf(':') + 1),
  );
  const taken = async (answer: Parameters<typeof healthAddressTaken>[0]) =>
    healthAddressTaken(
      answer,
      options.healthAddress,
      self,
      answer.kind === 'agent' ? await listeningPids(healthPort) : [],
    );
  const deadline = Date.now() + (options.readyTimeoutMs ?? 30_000);
  for (;;) {
    const answer = await probeHealth(options.healthAddress);
    if (answer.kind === 'agent' && own(answer.agent)) {
      if (answer.ready) return;
    } else if (answer.kind !== 'none') {
      await abandon();
      throw await taken(answer);
    }
    const exited = agent.exited();
    if (exited !== undefined) {
      await abandon();
      // Node reports a taken port as "listen EADDRINUSE: address already in use HOST:PORT".
      const inUse = `address already in use ${options.healthAddress.replace(/^\[|\]/g, '')}`;
      if (logSince(layout.logFile, logStart).includes(inUse)) {
        const holder = await probeHealth(options.healthAddress);
        throw await taken(holder.kind === 'none' ? { kind: 'silent' } : holder);
      }
      throw new PodminError(
        'IO_ERROR',
        `starting podmin-agent: it exited (${exited}); log ${layout.logFile}:\n${tail(layout.logFile, logStart)}`,
      );
    }
    if (Date.now() > deadline) {
      await abandon();
      throw new PodminError(
        'IO_ERROR',
        `starting podmin-agent: not ready in time; log ${layout.logFile}:\n${tail(layout.logFile, logStart)}`,
      );
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * `podmin setup` on the local provider: starts `podmin-agent --provider local` in the
 * background with a node root under the data directory, waits until it is ready.
 * Idempotent: an agent already running with the same configuration is left as it is.
 */
export async function startLocalNode(
  options: LocalNodeOptions,
  reporter: Reporter,
): Promise<{ pid: number; started: boolean; layout: LocalNodeLayout }> {
  // Only the local provider's lifecycle calls this, so the context is a local one.
  const { context, nodegroup } = options;
  checkLocalNodeOptions(options);
  const layout = localNodeLayout(options.dataDir, context.cluster, nodegroup);
  const command = agentCommand(options, layout);
  const existing = await readState(layout.stateFile);
  if (
    existing &&
    JSON.stringify(existing.args) === JSON.stringify(command.args) &&
    JSON.stringify(existing.env) === JSON.stringify(command.env)
  ) {
    reporter.info(
      `podmin-agent is already running for ${context.cluster}/${nodegroup} (pid ${existing.pid})`,
    );
    return { pid: existing.pid, started: false, layout };
  }
  if (existing) {
    reporter.info(`Restarting podmin-agent (pid ${existing.pid}): its configuration changed`);
    await stopAgent(existing.pid);
  }
  const agent = await spawnAgent(options.agentProgram, layout, command);
  reporter.info(
    `Started podmin-agent (pid ${agent.pid}) with node root ${layout.root}; waiting until it is ready`,
  );
  await awaitAgentReady(options, layout, agent);
  return { pid: agent.pid, started: true, layout };
}

/** `podmin teardown` on the local provider: stops the node's agent; bucket, context and secrets stay. */
export async function stopLocalNode(
  options: Pick<LocalNodeOptions, 'context' | 'nodegroup' | 'dataDir'>,
  reporter: Reporter,
): Promise<boolean> {
  const layout = localNodeLayout(options.dataDir, options.context.cluster, options.nodegroup);
  const state = await readState(layout.stateFile);
  await fsp.rm(layout.stateFile, { force: true });
  await fsp.rm(layout.pidFile, { force: true });
  if (!state) {
    reporter.info(`No podmin-agent is running for ${options.context.cluster}/${options.nodegroup}`);
    return false;
  }
  await stopAgent(state.pid);
  reporter.info(
    `Stopped podmin-agent (pid ${state.pid}); the bucket, context and secrets are kept`,
  );
  return true;
}
