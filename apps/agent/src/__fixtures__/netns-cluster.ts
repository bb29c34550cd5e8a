// Network namespaces as nodes on one machine (root only): a bridge namespace joins one veth per
// node namespace, each node gets a unique-local address on a shared /64, and podmin-agent runs
// inside each namespace as its own process group, so a test can SIGKILL or SIGSTOP a whole
// node (agent and service processes) and read what every node logged.
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { LocalDirectoryObjectStore } from '@podmin/data-access-object-store';
import { LocalSecretStore, type SecretStore } from '@podmin/data-access-secrets';
import { formatIpv6 } from '@podmin/util-names';
import { AGENT_BIN, seedClusterSecrets } from '@podmin/testing';
import { NodeProcess } from './node-process';

/** Every `ip` call is bounded: a wedged netlink call must fail the test, not hang it. */
const IP_TIMEOUT_MS = 10_000;
/** All names this harness creates start with this, then the creating process's pid. */
export const NETNS_PREFIX = 'pmt-';

/** Runs `ip` (or any command) synchronously; throws with its stderr on failure. */
export function sh(cmd: string, args: readonly string[], timeoutMs = IP_TIMEOUT_MS): string {
  const r = spawnSync(cmd, [...args], { encoding: 'utf8', timeout: timeoutMs });
  if (r.error) throw new Error(`${cmd} ${args.join(' ')}: ${r.error.message}`);
  if (r.status !== 0)
    throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr.trim()}`);
  return r.stdout;
}

/** Runs `ip -n <ns> …`, bounded like {@link sh}. */
function ipIn(ns: string, ...args: string[]): string {
  return sh('ip', ['-n', ns, ...args]);
}

/** Why this machine cannot run network-namespace tests, or undefined when it can. */
export function netnsUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root for network namespaces';
  const probe = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8', timeout: IP_TIMEOUT_MS });
  if (probe.error || probe.status !== 0) return '`ip netns` is not available (iproute2)';
  return undefined;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function namespaces(): string[] {
  // `ip netns list` prints "name (id: N)" or just "name".
  return sh('ip', ['netns', 'list'])
    .split('\n')
    .map((l) => l.trim().split(/\s+/)[0] ?? '')
    .filter((n) => n !== '');
}

/** Kills what still runs inside a namespace of ours, then deletes it. */
function deleteNamespace(name: string): void {
  const pids = spawnSync('ip', ['netns', 'pids', name], {
    encoding: 'utf8',
    timeout: IP_TIMEOUT_MS,
  })
    .stdout?.split('\n')
    .map(Number)
    .filter((p) => Number.isInteger(p) && p > 0);
  for (const pid of pids ?? []) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
  spawnSync('ip', ['netns', 'del', name], { timeout: IP_TIMEOUT_MS });
}

/**
 * Deletes namespaces a previous run of this harness left behind: those of `prefix` (this run's,
 * if the pid was reused) and those whose creating process is gone.
 */
export function removeLeftovers(prefix: string): string[] {
  const removed: string[] = [];
  for (const name of namespaces()) {
    const m = /^pmt-(\d+)-/.exec(name);
    if (!m) continue;
    if (name.startsWith(prefix) || !alive(Number(m[1]))) {
      deleteNamespace(name);
      removed.push(name);
    }
  }
  return removed;
}

/** One node: its namespace, ID, address on the shared /64, and Pod /80. */
export interface NetnsNode {
  readonly n: number;
  readonly ns: string;
  readonly id: string;
  readonly address: string;
  readonly prefix: string;
}

/** The namespaces and links of one test; {@link destroy} removes all of them. */
export class NetnsCluster {
  private constructor(
    readonly prefix: string,
    readonly bridgeNs: string,
    readonly nodes: readonly NetnsNode[],
    /**
     * The bridge namespace as a host on the shared /64 (`fd00:R::fffe`, on its bridge), for a
     * server every node must reach (an S3 emulator); not a node, so no agent runs there.
     */
    readonly bridge: NetnsNode,
  ) {}

  /**
   * Creates `count` node namespaces joined by a bridge namespace, addresses
   * `fd00:R::n/64` (R random) and Pod prefixes `fd00:R:0:n::/80`; removes what it created if
   * any step fails.
   */
  static create(count: number, prefix = `${NETNS_PREFIX}${process.pid}-`): NetnsCluster {
    removeLeftovers(prefix);
    const r = crypto.randomInt(1, 0x10000);
    const nodes: NetnsNode[] = [];
    for (let n = 1; n <= count; n++)
      nodes.push({
        n,
        ns: `${prefix}n${n}`,
        id: `node-${n}`,
        address: formatIpv6([0xfd00, r, 0, 0, 0, 0, 0, n]),
        prefix: `${formatIpv6([0xfd00, r, 0, n, 0, 0, 0, 0])}/80`,
      });
    const bridge: NetnsNode = {
      n: 0,
      ns: `${prefix}br`,
      id: 'bridge',
      address: formatIpv6([0xfd00, r, 0, 0, 0, 0, 0, 0xfffe]),
      prefix: '',
    };
    const cluster = new NetnsCluster(prefix, bridge.ns, nodes, bridge);
    try {
      cluster.build();
    } catch (err) {
      cluster.destroy();
      throw err;
    }
    return cluster;
  }

  private build(): void {
    const br = this.bridgeNs;
    sh('ip', ['netns', 'add', br]);
    ipIn(br, 'link', 'set', 'lo', 'up');
    ipIn(br, 'link', 'add', 'br0', 'type', 'bridge');
    ipIn(br, 'link', 'set', 'br0', 'up');
    ipIn(br, 'addr', 'add', `${this.bridge.address}/64`, 'dev', 'br0', 'nodad');
    for (const node of this.nodes) {
      sh('ip', ['netns', 'add', node.ns]);
      ipIn(node.ns, 'link', 'set', 'lo', 'up');
      // Created in the bridge namespace with its peer placed straight into the node's, so no
      // name is ever taken in the host namespace.
      const port = `p${node.n}`;
      ipIn(br, 'link', 'add', port, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', node.ns);
      ipIn(br, 'link', 'set', port, 'master', 'br0', 'up');
      // nodad: the agent binds [address]:8081 at once; a tentative address cannot be bound.
      ipIn(node.ns, 'addr', 'add', `${node.address}/64`, 'dev', 'eth0', 'nodad');
      ipIn(node.ns, 'link', 'set', 'eth0', 'up');
    }
  }

  /**
   * Pings every node from every other (one packet, one second each, a bounded number of
   * rounds while the bridge ports come up); throws naming the pairs that never answered.
   */
  checkReachability(rounds = 10): void {
    let failing: string[] = [];
    for (let round = 0; round < rounds; round++) {
      failing = [];
      for (const from of this.nodes)
        for (const to of this.nodes) {
          if (from === to) continue;
          const r = spawnSync(
            'ip',
            ['netns', 'exec', from.ns, 'ping', '-6', '-c1', '-W1', to.address],
            { timeout: 5_000 },
          );
          if (r.status !== 0) failing.push(`${from.id} -> ${to.id} (${to.address})`);
        }
      if (failing.length === 0) return;
      spawnSync('sleep', ['0.5']);
    }
    throw new Error(`nodes cannot reach each other: ${failing.join(', ')}`);
  }

  /** Runs a command inside a node's namespace (bounded). */
  exec(node: NetnsNode, cmd: string, args: readonly string[], timeoutMs = IP_TIMEOUT_MS) {
    return spawnSync('ip', ['netns', 'exec', node.ns, cmd, ...args], {
      encoding: 'utf8',
      timeout: timeoutMs,
    });
  }

  /** Deletes every namespace of this cluster (killing anything still inside); never throws. */
  destroy(): void {
    for (const name of [...this.nodes.map((n) => n.ns), this.bridgeNs]) {
      try {
        if (namespaces().includes(name)) deleteNamespace(name);
      } catch {
        // Best effort: the next run's removeLeftovers tries again.
      }
    }
  }

  /** Names of this cluster's namespaces that still exist. */
  remaining(): string[] {
    const mine = new Set([...this.nodes.map((n) => n.ns), this.bridgeNs]);
    return namespaces().filter((n) => mine.has(n));
  }
}

/** The cluster a netns node's agent joins, beyond the node itself. */
export interface NodeAgentSetup {
  /** The built podmin-agent bundle. */
  readonly bin: string;
  readonly cluster: string;
  /**
   * `local` (the default): `bucket` is the shared directory and secrets are in `secretsFile`;
   * `aws`: `bucket` is an S3 bucket in `region`, reached (with SSM) through the AWS endpoint
   * variables in `env`.
   */
  readonly provider?: 'local' | 'aws';
  /** The provider's region (default `local`). */
  readonly region?: string;
  /**
   * The node's Pod /80 (default: its unique-local one, {@link NetnsNode.prefix}); the aws
   * provider accepts only a global-unicast /80.
   */
  readonly podPrefix?: (node: NetnsNode) => string;
  /** The shared local-directory bucket, or the S3 bucket's name. */
  readonly bucket: string;
  /** The shared local secret store (see {@link storeClusterSecrets}); local provider only. */
  readonly secretsFile?: string;
  /** Each node's root is `<work>/<node id>`. */
  readonly work: string;
  /** Added to the agent's environment (election timings, a kubelet Pods API socket). */
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * Starts podmin-agent for `node` inside its namespace: the local provider unless `setup` names
 * another, NodeGroup `default`, the node's address and /80, and the default loopback addresses
 * (each namespace has its own loopback, so every node can use the same ports).
 */
export function startNodeAgent(node: NetnsNode, setup: NodeAgentSetup): NodeProcess {
  const root = path.join(setup.work, node.id);
  fs.mkdirSync(root, { recursive: true });
  return new NodeProcess(
    node,
    [
      process.execPath,
      setup.bin,
      '--provider',
      setup.provider ?? 'local',
      '--bucket',
      setup.bucket,
      '--region',
      setup.region ?? 'local',
      '--cluster',
      setup.cluster,
      '--nodegroup',
      'default',
      '--ipv6-prefix',
      setup.podPrefix?.(node) ?? node.prefix,
    ],
    {
      PATH: process.env['PATH'] ?? '/usr/sbin:/usr/bin:/sbin:/bin',
      PODMIN_NODE_ID: node.id,
      PODMIN_NODE_ADDRESS: node.address,
      PODMIN_NODE_ROOT: root,
      ...(setup.secretsFile === undefined ? {} : { PODMIN_LOCAL_SECRETS_FILE: setup.secretsFile }),
      PODMIN_AGENT_HEALTH_ADDRESS: '127.0.0.1:9440',
      PODMIN_AGENT_REGISTRY_LISTEN: '127.0.0.1:5000',
      PODMIN_AGENT_DNS_LISTEN: '127.0.0.1:1053',
      ...setup.env,
    },
  );
}

/**
 * What `podmin setup` stores create-only before any agent starts: the workload CA key and the
 * cluster CA, in the local secret store file `secrets` or in the given store (SSM for aws).
 */
export async function storeClusterSecrets(
  secrets: string | SecretStore,
  cluster: string,
): Promise<void> {
  await seedClusterSecrets(
    typeof secrets === 'string'
      ? new LocalSecretStore({ file: secrets, provider: 'aws-parameter-store' })
      : secrets,
    cluster,
  );
}

/**
 * A cluster of `count` nodes for a spec that runs the built agent on each, once every node
 * reaches every other; throws when this machine cannot run one or the agent bundle is missing.
 */
export function createAgentCluster(count: number, prefix?: string): NetnsCluster {
  const unavailable = netnsUnavailable();
  if (unavailable) throw new Error(`cannot run: ${unavailable}`);
  if (!fs.existsSync(AGENT_BIN))
    throw new Error(`${AGENT_BIN} is missing (build the agent bundles first)`);
  const cluster = NetnsCluster.create(count, prefix);
  try {
    cluster.checkReachability();
  } catch (err) {
    cluster.destroy();
    throw err;
  }
  return cluster;
}

/** One local-directory bucket and secrets file that every node of a cluster shares. */
export interface SharedLocalBucket {
  /** The bucket, as the test reads and writes it. */
  readonly objects: LocalDirectoryObjectStore;
  /** Every node's agent setup (the built agent on the local provider) but its environment. */
  readonly setup: NodeAgentSetup;
}

/**
 * Creates `<work>/bucket` and `<work>/secrets.json`, the latter holding what `podmin setup`
 * stores for `cluster` before any agent starts.
 */
export async function sharedLocalBucket(work: string, cluster: string): Promise<SharedLocalBucket> {
  const bucket = path.join(work, 'bucket');
  fs.mkdirSync(bucket, { recursive: true });
  const secretsFile = path.join(work, 'secrets.json');
  await storeClusterSecrets(secretsFile, cluster);
  return {
    objects: new LocalDirectoryObjectStore(bucket),
    setup: { bin: AGENT_BIN, cluster, bucket, secretsFile, work },
  };
}
