import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { PodminError } from '@podmin/util-errors';
import { writeFileAtomic } from '@podmin/util-fs';
import type { Reporter } from '@podmin/cli-util-io';
import type { NodeConfig } from '@podmin/cli-util-node-config';
import type { LocalNodeLayout } from './node-layout';
import type { NodeStackBinaries } from './node-stack-binaries';
import {
  localNodeConfig,
  nodeStackPaths,
  writeNodeConfig,
  type NodeStackOptions,
} from './node-stack-config';
import { clearPodNetwork, podNetwork } from './pod-network';
import { alive, stopProcess } from './process-control';

const run = promisify(execFile);

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

/** What the last {@link startNodeStack} recorded, if anything. */
async function readStack(file: string): Promise<StackState | undefined> {
  try {
    return JSON.parse(await fsp.readFile(file, 'utf8')) as StackState;
  } catch {
    return undefined;
  }
}

/**
 * Makes the node root's directories, links containerd's state and kubelet's root from their VM
 * paths to the short directory ({@link nodeStackPaths}) and writes the node configuration.
 */
async function prepareNodeRoot(
  layout: LocalNodeLayout,
  p: ReturnType<typeof nodeStackPaths>,
  config: NodeConfig,
): Promise<void> {
  const mkdir = (d: string) => fsp.mkdir(d, { recursive: true, mode: 0o755 });
  await Promise.all([
    mkdir(path.join(p.hostsDir, 'registry.podmin.internal')),
    mkdir(p.cniConf),
    mkdir(p.containerdState),
    mkdir(p.kubeletRoot),
    mkdir(p.logDir),
    mkdir(path.dirname(p.kubeletConfig)),
    mkdir(path.dirname(p.corefile)),
    mkdir(path.join(layout.root, 'var/lib')),
    mkdir(path.join(layout.root, 'run')),
  ]);
  for (const [link, target] of [
    [path.join(layout.root, 'run/containerd'), p.containerdState],
    [path.join(layout.root, 'var/lib/kubelet'), p.kubeletRoot],
  ] as const) {
    await fsp.rm(link, { recursive: true, force: true });
    await fsp.symlink(target, link);
  }
  await writeNodeConfig(layout.root, config);
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
  await prepareNodeRoot(options.layout, p, config);
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
    if (pid !== undefined) await stopProcess(pid, 10_000, 5_000);
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
