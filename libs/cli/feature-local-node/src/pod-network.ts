import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { inIpv6Prefix } from '@podmin/util-names';
import { awaitExit } from './process-control';

const run = promisify(execFile);

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
