import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import { createHash } from 'node:crypto';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { PodminError } from '@podmin/util-errors';
import { inIpv6Prefix } from '@podmin/util-names';
import { writeFileAtomic } from '@podmin/util-fs';
import type { Reporter } from '@podmin/cli-util-io';
import { NODE_CONFIG_PATHS, renderNodeConfig, type NodeConfig } from '@podmin/cli-util-node-config';
import type { LocalNodeLayout } from './local-node';

const run = promisify(execFile);

/** The node-stack programs a local node runs Pods with. */
export interface NodeStackBinaries {
  kubelet: string;
  containerd: string;
  /** Directory holding containerd-shim-runc-v2 (put on containerd's PATH). */
  shimDir: string;
  /** Directory holding the CNI plugins ptp, host-local and loopback. */
  cniDir: string;
  /** crictl, used to remove Pods (and so their interfaces) at teardown. */
  crictl: string;
  /** CoreDNS, the Pods' resolver on the node address. */
  coredns: string;
}

/** The sandbox image every local node pins: the spec's mirror path of the pause image. */
export const SANDBOX_IMAGE = 'registry.podmin.internal/mirror/registry.k8s.io/pause:3.10';

/**
 * Finds kubelet, containerd, its runc shim, the CNI plugins and crictl on PATH or in
 * `extraDir` (tools/node-stack/build.sh's bin directory), plus runc on PATH; undefined when
 * any is missing (with the names of the missing ones).
 */
export function findNodeStackBinaries(
  env: Readonly<Record<string, string | undefined>>,
  extraDir?: string,
): { binaries?: NodeStackBinaries; missing: string[] } {
  const dirs = [
    ...(extraDir ? [extraDir] : []),
    ...(env['PATH'] ?? '').split(path.delimiter).filter(Boolean),
  ];
  const find = (name: string): string | undefined =>
    dirs.map((d) => path.join(d, name)).find((p) => fs.existsSync(p));
  const names = [
    'kubelet',
    'containerd',
    'containerd-shim-runc-v2',
    'ptp',
    'host-local',
    'loopback',
    'crictl',
    'coredns',
    'runc',
  ];
  const found = Object.fromEntries(names.map((n) => [n, find(n)]));
  const missing = names.filter((n) => !found[n]);
  if (missing.length > 0) return { missing };
  return {
    missing,
    binaries: {
      kubelet: found['kubelet'] as string,
      containerd: found['containerd'] as string,
      shimDir: path.dirname(found['containerd-shim-runc-v2'] as string),
      cniDir: path.dirname(found['ptp'] as string),
      crictl: found['crictl'] as string,
      coredns: found['coredns'] as string,
    },
  };
}

/**
 * Files and sockets of the node stack under the node root (mirroring a VM's paths). Unix
 * socket paths are limited to 108 bytes, so containerd's state and kubelet's root live in a
 * short directory under the system temp dir, linked from `<root>/run/containerd` and
 * `<root>/var/lib/kubelet` so the node root still shows a VM's layout.
 */
export function nodeStackPaths(layout: LocalNodeLayout) {
  const r = layout.root;
  const short = path.join(
    os.tmpdir(),
    `podmin-${createHash('sha256').update(r).digest('hex').slice(0, 12)}`,
  );
  return {
    short,
    containerdConfig: path.join(r, NODE_CONFIG_PATHS.containerdConfig),
    hostsDir: path.join(r, 'etc/containerd/certs.d'),
    cniConf: path.join(r, 'etc/cni/net.d'),
    containerdState: path.join(short, 'containerd'),
    socket: path.join(short, 'containerd', 'containerd.sock'),
    kubeletConfig: path.join(r, NODE_CONFIG_PATHS.kubeletConfig),
    kubeletRoot: path.join(short, 'kubelet'),
    podsApiSocket: path.join(r, 'var/lib/kubelet/pods-api/pods-api.sock'),
    crictlConfig: path.join(r, NODE_CONFIG_PATHS.crictlConfig),
    corefile: path.join(r, NODE_CONFIG_PATHS.corefile),
    state: path.join(r, 'run/podmin/stack.json'),
    logDir: path.join(r, 'var/log'),
  };
}

/** Inputs of {@link startNodeStack}. */
export interface NodeStackOptions {
  layout: LocalNodeLayout;
  binaries: NodeStackBinaries;
  /** `host:port` of the agent registry containerd resolves registry.podmin.internal to. */
  registryListen: string;
  /** `host:port` of the agent's Service DNS, where CoreDNS forwards svc.cluster.local. */
  dnsListen: string;
  /** The node's /80 Pod prefix for CNI host-local. */
  podPrefix: string;
  /**
   * The node's IPv6 address (a VM's global address; locally a unique-local /128 added to
   * `lo`): CoreDNS binds port 53 on it and every Pod uses it as its DNS server.
   */
  nodeAddress: string;
  /** Memory reserved for the OS and the agent (DESIGN §6.6). */
  systemReservedMemory: string;
}

/**
 * The local node's containerd, CNI, kubelet, crictl and CoreDNS configuration: the `local`
 * profile of @podmin/cli-util-node-config (an AWS VM's differs only where that profile says).
 */
export function localNodeConfig(options: NodeStackOptions): NodeConfig {
  const p = nodeStackPaths(options.layout);
  return renderNodeConfig('local', {
    root: options.layout.root,
    containerdState: p.containerdState,
    containerdSocket: p.socket,
    cniBinDir: options.binaries.cniDir,
    kubeletRootDir: p.kubeletRoot,
    nodeAddress: options.nodeAddress,
    podPrefix: options.podPrefix,
    sandboxImage: SANDBOX_IMAGE,
    registryListen: options.registryListen,
    serviceDnsListen: options.dnsListen,
    // This machine's resolver, as the host itself uses it.
    upstreamResolvConf: '/etc/resolv.conf',
    systemReserved: { cpu: '100m', memory: options.systemReservedMemory },
    hostname: path.basename(options.layout.root),
  });
}

/** Writes every file of a rendered node configuration under the node root. */
export async function writeNodeConfig(root: string, config: NodeConfig): Promise<void> {
  for (const file of config.files) {
    await writeFileAtomic(path.join(root, file.path), file.content, {
      mode: 0o644,
      dirMode: 0o755,
    });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits until none of `pids` is alive, polling every 100 ms for at most `boundMs`. */
async function awaitExit(pids: readonly number[], boundMs: number): Promise<void> {
  const deadline = Date.now() + boundMs;
  while (pids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
}

/**
 * Starts containerd and kubelet (standalone, no API server) configured as the spec's node
 * against the agent's static-Pod directory ({@link localNodeConfig}): registry.podmin.internal →
 * the agent registry over plain HTTP, the sandbox image pinned to the mirrored pause image, CNI
 * ptp + host-local on the node's /80, runc and cgroupfs on this machine's cgroup hierarchy, the
 * kubelet Pods API, the spec's reservations. Idempotent: a running stack is left as it is.
 */
export async function startNodeStack(
  options: NodeStackOptions,
  reporter: Reporter,
): Promise<{ started: boolean }> {
  const p = nodeStackPaths(options.layout);
  const config = localNodeConfig(options);
  const previous = await readStack(p.state);
  if (previous && previous.pids.every(alive)) {
    reporter.info(`containerd and kubelet are already running (pids ${previous.pids.join(', ')})`);
    return { started: false };
  }
  if (previous) await stopNodeStack(options.layout, options.binaries, reporter);
  const mkdir = (d: string) => fsp.mkdir(d, { recursive: true, mode: 0o755 });
  await Promise.all([
    mkdir(path.join(p.hostsDir, 'registry.podmin.internal')),
    mkdir(p.cniConf),
    mkdir(p.containerdState),
    mkdir(p.kubeletRoot),
    mkdir(p.logDir),
    mkdir(path.dirname(p.kubeletConfig)),
    mkdir(path.dirname(p.corefile)),
    mkdir(path.join(options.layout.root, 'var/lib')),
    mkdir(path.join(options.layout.root, 'run')),
  ]);
  for (const [link, target] of [
    [path.join(options.layout.root, 'run/containerd'), p.containerdState],
    [path.join(options.layout.root, 'var/lib/kubelet'), p.kubeletRoot],
  ] as const) {
    await fsp.rm(link, { recursive: true, force: true });
    await fsp.symlink(target, link);
  }
  await writeNodeConfig(options.layout.root, config);
  const env = {
    PATH: `${options.binaries.shimDir}${path.delimiter}${process.env['PATH'] ?? '/usr/sbin:/usr/bin:/sbin:/bin'}`,
    HOME: process.env['HOME'] ?? '/',
  };
  const launch = (name: string, file: string, args: string[]): number => {
    const log = fs.openSync(path.join(p.logDir, `${name}.log`), 'a', 0o600);
    const child = spawn(file, args, { detached: true, stdio: ['ignore', log, log], env });
    fs.closeSync(log);
    child.unref();
    if (child.pid === undefined)
      throw new PodminError('IO_ERROR', `starting ${name}: no process was created`);
    return child.pid;
  };
  await addNodeAddress(options.nodeAddress);
  const coredns = launch('coredns', options.binaries.coredns, ['-conf', p.corefile]);
  const containerd = launch('containerd', options.binaries.containerd, [
    '--config',
    p.containerdConfig,
  ]);
  for (let i = 0; i < 100 && !fs.existsSync(p.socket); i++)
    await new Promise((r) => setTimeout(r, 100));
  if (!fs.existsSync(p.socket))
    throw new PodminError(
      'IO_ERROR',
      `starting containerd: no socket at ${p.socket}; see ${path.join(p.logDir, 'containerd.log')}`,
    );
  const kubelet = launch('kubelet', options.binaries.kubelet, [...config.kubeletArgs]);
  const state: StackState = {
    pids: [kubelet, containerd, coredns],
    nodeAddress: options.nodeAddress,
    podPrefix: options.podPrefix,
    crictl: options.binaries.crictl,
  };
  await writeFileAtomic(p.state, JSON.stringify(state) + '\n', { mode: 0o600 });
  reporter.info(
    `Started CoreDNS on [${options.nodeAddress}]:53 (pid ${coredns}), containerd (pid ${containerd}) and kubelet (pid ${kubelet}) on ${options.layout.manifests}; crictl config: ${p.crictlConfig}`,
  );
  return { started: true };
}

/** What {@link startNodeStack} started, for teardown. */
interface StackState {
  /** kubelet, containerd, CoreDNS. */
  pids: number[];
  /** The address added to `lo`. */
  nodeAddress?: string;
  /** The Pods' prefix: ptp CNI routes each Pod's /128 inside it through the Pod's host veth. */
  podPrefix?: string;
  /** The crictl it was started with: teardown removes the Pods with it whatever PATH says then. */
  crictl?: string;
}

/** This node's Pod network: the host-side veths and the network namespaces they lead into. */
export interface PodNetwork {
  veths: string[];
  namespaces: string[];
}

const ipJson = <T>(args: string[]): Promise<T[]> =>
  run('ip', ['-j', ...args]).then(
    (r) => (r.stdout.trim() ? (JSON.parse(r.stdout) as T[]) : []),
    () => [],
  );

/**
 * Finds this node's Pod network from the routing state: ptp CNI routes each Pod's /128 inside
 * the Pod prefix through the Pod's host veth, whose peer lives in the Pod's namespace.
 */
export async function podNetwork(podPrefix: string | undefined): Promise<PodNetwork> {
  if (!podPrefix) return { veths: [], namespaces: [] };
  const routes = await ipJson<{ dst?: string; dev?: string }>(['-6', 'route', 'show']);
  const veths = new Set(
    routes
      .filter((r) => r.dev && r.dst && r.dst !== 'default' && !/\/(?!128$)/.test(r.dst))
      .filter((r) => inIpv6Prefix(r.dst as string, podPrefix))
      .map((r) => r.dev as string),
  );
  const links = await ipJson<{ ifname?: string; link_netnsid?: number }>([
    'link',
    'show',
    'type',
    'veth',
  ]);
  const names = new Map(
    (await ipJson<{ name?: string; id?: number }>(['netns', 'list'])).map((n) => [n.id, n.name]),
  );
  const namespaces = links
    .filter((l) => l.ifname && veths.has(l.ifname) && l.link_netnsid !== undefined)
    .map((l) => names.get(l.link_netnsid))
    .filter((n): n is string => typeof n === 'string');
  return { veths: [...veths].sort(), namespaces: [...new Set(namespaces)].sort() };
}

const linkExists = (dev: string): Promise<boolean> =>
  run('ip', ['link', 'show', 'dev', dev]).then(
    () => true,
    () => false,
  );

async function vethsLeft(devs: readonly string[], boundMs: number): Promise<string[]> {
  const deadline = Date.now() + boundMs;
  let left = [...devs];
  for (;;) {
    left = (await Promise.all(left.map(async (d) => ((await linkExists(d)) ? d : '')))).filter(
      Boolean,
    );
    if (left.length === 0 || Date.now() >= deadline) return left;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Makes sure the Pods' network is gone once containerd has stopped. Removing a sandbox releases
 * its namespace and the kernel destroys the veth pair in a work queue that can lag; a sandbox
 * containerd did not remove keeps its namespace mounted under /run/netns, veth and all, for
 * good. So: wait for the veths, then delete the namespaces still mounted, then the veths still
 * there (deleting one side takes its peer). Returns what had to be deleted.
 */
export async function clearPodNetwork(pods: PodNetwork): Promise<string[]> {
  if ((await vethsLeft(pods.veths, 10_000)).length === 0) return [];
  const deleted: string[] = [];
  for (const ns of pods.namespaces) {
    // A Pod whose sandbox was not removed still runs in its namespace, its shim gone.
    const pids = await run('ip', ['netns', 'pids', ns]).then(
      (r) => r.stdout.split('\n').filter(Boolean).map(Number),
      () => [] as number[],
    );
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
        deleted.push(`process ${pid}`);
      } catch {
        // gone already
      }
    }
    await awaitExit(pids, 5_000);
    if (fs.existsSync(path.join('/run/netns', ns))) {
      await run('ip', ['netns', 'del', ns]).then(
        () => deleted.push(`namespace ${ns}`),
        () => undefined,
      );
    }
  }
  for (const dev of await vethsLeft(pods.veths, 5_000)) {
    await run('ip', ['link', 'del', 'dev', dev]).then(
      () => deleted.push(`veth ${dev}`),
      () => undefined,
    );
  }
  return deleted;
}

async function readStack(file: string): Promise<StackState | undefined> {
  try {
    return JSON.parse(await fsp.readFile(file, 'utf8')) as StackState;
  } catch {
    return undefined;
  }
}

/**
 * Adds the node address to `lo` (idempotent); the host routes Pods' DNS queries to it. Setup
 * calls it before starting the agent too, whose coordination listens on this address.
 */
export async function addNodeAddress(address: string): Promise<void> {
  try {
    await run('ip', ['-6', 'addr', 'replace', `${address}/128`, 'dev', 'lo']);
  } catch (err) {
    throw new PodminError(
      'IO_ERROR',
      `adding the node address ${address} to lo: ${(err as { stderr?: string }).stderr?.trim() || String(err)}`,
      { cause: err },
    );
  }
}

/**
 * Stops kubelet, removes the Pods (so CNI deletes their interfaces), stops containerd and its
 * shims and unmounts everything under the node root: nothing stray is left behind.
 */
export async function stopNodeStack(
  layout: LocalNodeLayout,
  binaries: Pick<NodeStackBinaries, 'crictl'> | undefined,
  reporter: Reporter,
): Promise<boolean> {
  const p = nodeStackPaths(layout);
  const state = await readStack(p.state);
  if (!state) return false;
  const [kubelet, containerd, coredns] = state.pids;
  const stop = async (pid: number | undefined): Promise<void> => {
    if (pid === undefined || !alive(pid)) return;
    process.kill(pid, 'SIGTERM');
    await awaitExit([pid], 10_000);
    if (!alive(pid)) return;
    process.kill(pid, 'SIGKILL');
    await awaitExit([pid], 5_000);
  };
  const pods = await podNetwork(state.podPrefix);
  await stop(kubelet);
  const crictl = [binaries?.crictl, state.crictl].find((c) => c && fs.existsSync(c));
  if (crictl && fs.existsSync(p.socket)) {
    await run(crictl, ['--runtime-endpoint', `unix://${p.socket}`, 'rmp', '-fa'], {
      timeout: 60_000,
    }).catch((err: Error & { stderr?: string }) =>
      reporter.warn(`Removing the Pods with crictl failed: ${err.stderr?.trim() || err.message}`),
    );
  }
  await stop(containerd);
  // Shims of this containerd outlive it; their command line names its state directory.
  const shims = await run('pgrep', ['-f', `containerd-shim-runc-v2 .*-address ${p.socket}`]).then(
    (r) => r.stdout.split('\n').filter(Boolean).map(Number),
    () => [] as number[],
  );
  for (const pid of shims) await stop(pid);
  const deleted = await clearPodNetwork(pods);
  if (deleted.length > 0)
    reporter.warn(`Deleted Pod network left after the Pods were removed: ${deleted.join(', ')}`);
  await stop(coredns);
  if (state.nodeAddress)
    await run('ip', ['-6', 'addr', 'del', `${state.nodeAddress}/128`, 'dev', 'lo']).catch(
      () => undefined,
    );
  const mounts = (await fsp.readFile('/proc/mounts', 'utf8'))
    .split('\n')
    .map((l) => l.split(' ')[1] ?? '')
    .filter((m) => m.startsWith(layout.root) || m.startsWith(p.short))
    .sort()
    .reverse();
  for (const m of mounts) await run('umount', ['-l', m]).catch(() => undefined);
  await fsp.rm(p.state, { force: true });
  await fsp.rm(p.short, { recursive: true, force: true });
  reporter.info(
    `Stopped kubelet, containerd, CoreDNS${shims.length ? ` and ${shims.length} runtime shim(s)` : ''}`,
  );
  return true;
}
