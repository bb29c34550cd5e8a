import { isDnsLabel, parseS3ObjectUrl } from '@podmin/util-names';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { PodminError, ValidationError } from '@podmin/util-errors';
import type { ClusterContext } from '@podmin/cli-util-config';
import { writeFileAtomic } from '@podmin/util-fs';
import type { Reporter } from '@podmin/cli-util-io';

/** Where one local node lives under the Podmin data directory. */
export interface LocalNodeLayout {
  /** Node root mirroring a VM's paths (`<root>/etc/podmin/manifests`, `<root>/run/podmin/workloads`, …). */
  root: string;
  manifests: string;
  workloads: string;
  pidFile: string;
  stateFile: string;
  logFile: string;
}

/** The layout of the local node of a cluster and NodeGroup. */
export function localNodeLayout(
  dataDir: string,
  cluster: string,
  nodegroup: string,
): LocalNodeLayout {
  const root = path.join(dataDir, 'nodes', cluster, nodegroup);
  return {
    root,
    manifests: path.join(root, 'etc', 'podmin', 'manifests'),
    workloads: path.join(root, 'run', 'podmin', 'workloads'),
    pidFile: path.join(root, 'run', 'podmin', 'agent.pid'),
    stateFile: path.join(root, 'run', 'podmin', 'agent.json'),
    logFile: path.join(root, 'var', 'log', 'podmin-agent.log'),
  };
}

/** A stable unique-local /80 Pod prefix for a local node: fd00::/8 + 72 bits of SHA-256(cluster/nodegroup). */
export function localPodPrefix(cluster: string, nodegroup: string): string {
  const h = createHash('sha256').update(`${cluster}/${nodegroup}`).digest();
  const groups = [
    0xfd00 | (h[0] as number),
    h.readUInt16BE(1),
    h.readUInt16BE(3),
    h.readUInt16BE(5),
    h.readUInt16BE(7),
  ];
  return `${groups.map((g) => g.toString(16)).join(':')}::/80`;
}

/**
 * The local node's address: a stable unique-local /128 (fd00::/8 + 120 bits of
 * SHA-256("node/" + cluster/nodegroup)) that setup adds to `lo` when it runs the node stack,
 * standing in for a VM's global IPv6 address (CoreDNS binds it; Pods use it as DNS server).
 */
export function localNodeAddress(cluster: string, nodegroup: string): string {
  const h = createHash('sha256').update(`node/${cluster}/${nodegroup}`).digest();
  const groups = [0xfd00 | (h[0] as number)];
  for (let i = 1; i < 15; i += 2) groups.push(h.readUInt16BE(i));
  return groups.map((g) => g.toString(16)).join(':');
}

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

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function readState(file: string): Promise<AgentState | undefined> {
  try {
    const state = JSON.parse(await fsp.readFile(file, 'utf8')) as AgentState;
    return Number.isInteger(state.pid) && alive(state.pid) ? state : undefined;
  } catch {
    return undefined;
  }
}

/** What a podmin-agent reports about itself on its health endpoints (`agent` of `/readyz`). */
export interface ReportedAgent {
  cluster: string;
  nodegroup: string;
  nodeRoot: string;
  pid: number;
  version: string;
}

/** What answered on the health address. */
export type HealthAnswer =
  | { kind: 'none' }
  | { kind: 'agent'; ready: boolean; agent: ReportedAgent }
  | { kind: 'unnamed-agent' }
  | { kind: 'other'; detail: string };

function reportedAgent(value: unknown): ReportedAgent | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const strings = ['cluster', 'nodegroup', 'nodeRoot', 'version'] as const;
  if (v['name'] !== 'podmin-agent' || !Number.isInteger(v['pid'])) return undefined;
  if (!strings.every((k) => typeof v[k] === 'string')) return undefined;
  return {
    cluster: v['cluster'] as string,
    nodegroup: v['nodegroup'] as string,
    nodeRoot: v['nodeRoot'] as string,
    pid: v['pid'] as number,
    version: v['version'] as string,
  };
}

/** Asks `/readyz` on a loopback `host:port` who answers there and whether it is ready. */
export async function probeHealth(healthAddress: string): Promise<HealthAnswer> {
  let res: Response;
  let text: string;
  try {
    res = await fetch(`http://${healthAddress}/readyz`, { signal: AbortSignal.timeout(1000) });
    text = await res.text();
  } catch {
    return { kind: 'none' };
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  if ((b['status'] !== 'ok' && b['status'] !== 'unavailable') || !Array.isArray(b['services'])) {
    const type = res.headers.get('content-type');
    return {
      kind: 'other',
      detail: `/readyz answered HTTP ${res.status}${type ? ` ${type}` : ''}`,
    };
  }
  const agent = reportedAgent(b['agent']);
  return agent ? { kind: 'agent', ready: res.status === 200, agent } : { kind: 'unnamed-agent' };
}

/**
 * The pids holding the socket that listens on TCP `port` (any address, IPv4 or IPv6), as
 * `<procRoot>/net/tcp`, `<procRoot>/net/tcp6` and `<procRoot>/<pid>/fd/*` show them; sorted, and
 * empty when it cannot tell (no listener, no /proc, or fds this user may not read).
 * Hand-written: no maintained library maps a listening port to its process from /proc.
 */
export async function listeningPids(port: number, procRoot = '/proc'): Promise<number[]> {
  const sockets = new Set<string>();
  for (const table of ['tcp', 'tcp6']) {
    let text: string;
    try {
      text = await fsp.readFile(path.join(procRoot, 'net', table), 'utf8');
    } catch {
      continue;
    }
    // Columns: sl local_address rem_address st … uid timeout inode; addresses end in :PORT (hex).
    for (const line of text.split('\n').slice(1)) {
      const [, local, , state, , , , , , inode] = line.trim().split(/\s+/);
      if (local === undefined || inode === undefined || state !== '0A' || inode === '0') continue;
      if (Number.parseInt(local.slice(local.lastIndexOf(':') + 1), 16) === port)
        sockets.add(`socket:[${inode}]`);
    }
  }
  if (sockets.size === 0) return [];
  let entries: string[];
  try {
    entries = await fsp.readdir(procRoot);
  } catch {
    return [];
  }
  const owners: number[] = [];
  for (const entry of entries.filter((e) => /^\d+$/.test(e))) {
    const fdDir = path.join(procRoot, entry, 'fd');
    // Another user's fds are unreadable (EACCES), and a process may exit while we look.
    const fds = await fsp.readdir(fdDir).catch(() => [] as string[]);
    const links = await Promise.all(
      fds.map((fd) => fsp.readlink(path.join(fdDir, fd)).catch(() => '')),
    );
    if (links.some((link) => sockets.has(link))) owners.push(Number(entry));
  }
  return owners.sort((a, b) => a - b);
}

/**
 * The error when something other than the agent setup started answers on its health address:
 * names what holds it and how to stop that. `listeners` are the pids /proc shows listening on
 * the port ({@link listeningPids}; empty when it could not tell): a pid an agent reports is
 * named only when it is among them.
 */
export function healthAddressTaken(
  answer: Exclude<HealthAnswer, { kind: 'none' }> | { kind: 'silent' },
  healthAddress: string,
  self: { cluster: string; nodegroup: string; dataDir: string },
  listeners: readonly number[] = [],
): PodminError {
  const port = healthAddress.slice(healthAddress.lastIndexOf(':') + 1);
  const doing = `starting podmin-agent for ${self.cluster}/${self.nodegroup}: ${healthAddress} is held by`;
  const elsewhere =
    'or run this cluster on other addresses (PODMIN_LOCAL_HEALTH_ADDRESS, PODMIN_LOCAL_REGISTRY_LISTEN, PODMIN_LOCAL_DNS_LISTEN, PODMIN_LOCAL_COORDINATION_PORT)';
  const find = `find it with \`ss -ltnp 'sport = :${port}'\` (or \`lsof -i :${port}\`)`;
  const fail = (what: string, hint: string) =>
    new PodminError('ALREADY_EXISTS', `${doing} ${what}; this cluster's agent is not running`, {
      hint,
      fault: 'user',
    });
  switch (answer.kind) {
    case 'agent': {
      const a = answer.agent;
      // A node root is <data dir>/nodes/<cluster>/<nodegroup>: it tells whose configuration set it up.
      const dataDir = path.resolve(a.nodeRoot, '..', '..', '..');
      const teardown =
        path.resolve(dataDir) === path.resolve(self.dataDir)
          ? `\`podmin use ${a.cluster} && podmin teardown\``
          : `\`podmin teardown\` in cluster ${a.cluster}'s context (the Podmin configuration whose data directory is ${dataDir})`;
      const about = `cluster ${a.cluster}, nodegroup ${a.nodegroup}, node root ${a.nodeRoot}`;
      // Anything can answer /readyz with a pid: name one only when it holds the socket.
      if (listeners.includes(a.pid))
        return fail(
          `another podmin-agent (${about}, pid ${a.pid}, version ${a.version})`,
          `Stop that agent with ${teardown} or \`kill ${a.pid}\`, ${elsewhere}.`,
        );
      if (listeners.length > 0) {
        const one = listeners.length === 1;
        return fail(
          `${one ? 'pid' : 'pids'} ${listeners.join(', ')}, which ${one ? 'answers' : 'answer'} as another podmin-agent (${about}, version ${a.version}) but ${one ? 'is' : 'are'} not the pid that agent reports`,
          `Stop that agent with ${teardown} or \`kill ${listeners.join(' ')}\`, ${elsewhere}.`,
        );
      }
      return fail(
        `another podmin-agent (${about}, version ${a.version})`,
        `Stop that agent with ${teardown}, or kill the process listening on :${port} (setup could not tell which process listens there; find it with \`ss -ltnp 'sport = :${port}'\`, as root for another user's process), ${elsewhere}.`,
      );
    }
    case 'unnamed-agent':
      return fail(
        'a podmin-agent that does not say which cluster it serves (an older version)',
        `Stop it with \`podmin teardown\` in its cluster's context, or ${find} and kill that pid, ${elsewhere}.`,
      );
    case 'other':
      return fail(
        `something that is not a podmin-agent (${answer.detail})`,
        `Stop it (${find}), ${elsewhere}.`,
      );
    case 'silent':
      return fail(
        'something that is not a podmin-agent (it does not answer HTTP)',
        `Stop it (${find}), ${elsewhere}.`,
      );
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

/** Which node-stack programs are on PATH (kubelet and containerd run Pods for real). */
export function findNodeStack(env: Readonly<Record<string, string | undefined>> = process.env): {
  kubelet?: string;
  containerd?: string;
} {
  const found: { kubelet?: string; containerd?: string } = {};
  for (const dir of (env['PATH'] ?? '').split(path.delimiter)) {
    for (const name of ['kubelet', 'containerd'] as const) {
      const candidate = path.join(dir, name);
      if (!found[name] && fs.existsSync(candidate)) found[name] = candidate;
    }
  }
  return found;
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
  if (!isDnsLabel(nodegroup)) {
    throw new ValidationError(
      'setup',
      [{ field: '--nodegroup', message: `${JSON.stringify(nodegroup)} must be a DNS-1123 label` }],
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
  const layout = localNodeLayout(options.dataDir, context.cluster, nodegroup);
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
  const existing = await readState(layout.stateFile);
  if (
    existing &&
    JSON.stringify(existing.args) === JSON.stringify(args) &&
    JSON.stringify(existing.env) === JSON.stringify(env)
  ) {
    reporter.info(
      `podmin-agent is already running for ${context.cluster}/${nodegroup} (pid ${existing.pid})`,
    );
    return { pid: existing.pid, started: false, layout };
  }
  if (existing) {
    reporter.info(`Restarting podmin-agent (pid ${existing.pid}): its configuration changed`);
    await stopPid(existing.pid);
  }
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
    throw new PodminError('IO_ERROR', `starting ${options.agentProgram}: no process was created`);
  let exited: string | undefined;
  child.once('exit', (code, signal) => (exited = signal ?? `code ${code ?? '?'}`));
  child.unref();
  await writeFileAtomic(layout.pidFile, `${pid}\n`, { mode: 0o644 });
  await writeFileAtomic(layout.stateFile, JSON.stringify({ pid, args, env }, null, 2) + '\n', {
    mode: 0o600,
  });
  reporter.info(
    `Started podmin-agent (pid ${pid}) with node root ${layout.root}; waiting until it is ready`,
  );
  // Only the agent just started counts as ready: an agent of another cluster (or one left
  // over) on the same address would answer /readyz while this one dies of EADDRINUSE.
  const own = (a: ReportedAgent) =>
    a.pid === pid && a.cluster === context.cluster && a.nodeRoot === layout.root;
  const abandon = async () => {
    if (exited === undefined) await stopPid(pid);
    await fsp.rm(layout.stateFile, { force: true });
    await fsp.rm(layout.pidFile, { force: true });
  };
  const self = { cluster: context.cluster, nodegroup, dataDir: options.dataDir };
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
      if (answer.ready) return { pid, started: true, layout };
    } else if (answer.kind !== 'none') {
      await abandon();
      throw await taken(answer);
    }
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

async function stopPid(pid: number, graceMs = 15_000): Promise<void> {
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  const deadline = Date.now() + graceMs;
  while (alive(pid)) {
    if (Date.now() > deadline) {
      process.kill(pid, 'SIGKILL');
      break;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
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
  await stopPid(state.pid);
  reporter.info(
    `Stopped podmin-agent (pid ${state.pid}); the bucket, context and secrets are kept`,
  );
  return true;
}

/** NodeGroups that have a local node directory for a cluster. */
export async function localNodeGroups(dataDir: string, cluster: string): Promise<string[]> {
  try {
    return (await fsp.readdir(path.join(dataDir, 'nodes', cluster))).sort();
  } catch {
    return [];
  }
}
