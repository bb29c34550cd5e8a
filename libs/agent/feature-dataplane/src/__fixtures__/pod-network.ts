import { spawn, spawnSync, type ChildProcess } from 'node:child_process';

/** One Pod of the test network: a namespace joined to the node by a veth pair, ptp-style. */
export interface TestPod {
  readonly name: string;
  readonly address: string;
  /** The host-side veth in the node namespace. */
  readonly hostVeth: string;
}

function ip(args: string[]): string {
  const r = spawnSync('ip', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ip ${args.join(' ')}: ${r.stderr.trim()}`);
  return r.stdout;
}

/**
 * A node and its Pods in network namespaces, wired as ptp CNI wires them: each Pod's veth has
 * its /128 address and a default route through the host side's link-local gateway, and the
 * node keeps one `<pod>/128` route per host-side veth. The node address sits on the node's
 * `lo`. Names carry the test's tag so parallel runs never collide; `destroy` removes it all.
 */
export class PodNetwork {
  readonly pods = new Map<string, TestPod>();
  private readonly children = new Set<ChildProcess>();
  private next = 0;

  private constructor(
    readonly tag: string,
    readonly nodeNs: string,
  ) {}

  /** Whether this machine can make network namespaces (root and iproute2). */
  static usable(): string | undefined {
    if (process.getuid?.() !== 0) return 'needs root (network namespaces and eBPF)';
    const probe = `pdprobe${process.pid}`;
    const r = spawnSync('ip', ['netns', 'add', probe], { encoding: 'utf8' });
    if (r.status !== 0) return `cannot create a network namespace: ${r.stderr.trim()}`;
    spawnSync('ip', ['netns', 'del', probe]);
    return undefined;
  }

  /** Creates the node namespace with `nodeAddress` on its loopback. */
  static create(tag: string, nodeAddress: string): PodNetwork {
    const net = new PodNetwork(tag, `${tag}-node`);
    ip(['netns', 'add', net.nodeNs]);
    net.exec(net.nodeNs, ['sysctl', '-qw', 'net.ipv6.conf.all.forwarding=1']);
    ip(['-n', net.nodeNs, 'link', 'set', 'lo', 'up']);
    ip(['-n', net.nodeNs, 'addr', 'add', `${nodeAddress}/128`, 'dev', 'lo']);
    return net;
  }

  /** Adds a Pod namespace `name` with `address`, wired to the node. */
  addPod(name: string, address: string): TestPod {
    const ns = `${this.tag}-${name}`;
    const hostVeth = `${this.tag.slice(0, 10)}v${this.next++}`;
    ip(['netns', 'add', ns]);
    ip(['-n', ns, 'link', 'set', 'lo', 'up']);
    ip([
      'link',
      'add',
      hostVeth,
      'netns',
      this.nodeNs,
      'type',
      'veth',
      'peer',
      'name',
      'eth0',
      'netns',
      ns,
    ]);
    ip(['-n', this.nodeNs, 'link', 'set', hostVeth, 'up']);
    ip(['-n', this.nodeNs, 'addr', 'add', 'fe80::1/64', 'dev', hostVeth, 'nodad']);
    ip(['-n', ns, 'addr', 'add', `${address}/128`, 'dev', 'eth0', 'nodad']);
    ip(['-n', ns, 'link', 'set', 'eth0', 'up']);
    ip(['-n', ns, '-6', 'route', 'add', 'fe80::1', 'dev', 'eth0']);
    ip([
      '-n',
      ns,
      '-6',
      'route',
      'add',
      'default',
      'via',
      'fe80::1',
      'dev',
      'eth0',
      'src',
      address,
    ]);
    ip(['-n', this.nodeNs, '-6', 'route', 'add', `${address}/128`, 'dev', hostVeth]);
    const pod = { name, address, hostVeth };
    this.pods.set(name, pod);
    return pod;
  }

  /** The namespace of Pod `name`. */
  ns(name: string): string {
    return `${this.tag}-${name}`;
  }

  /** Runs `argv` in namespace `ns` to completion (bounded by `timeoutMs`). */
  exec(
    ns: string,
    argv: string[],
    timeoutMs = 120_000,
  ): { status: number; stdout: string; stderr: string } {
    const r = spawnSync('ip', ['netns', 'exec', ns, ...argv], {
      encoding: 'utf8',
      timeout: timeoutMs,
    });
    return { status: r.status ?? -1, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
  }

  /** Starts `argv` in namespace `ns`; it is killed by `destroy`. */
  spawn(ns: string, argv: string[], env: NodeJS.ProcessEnv = process.env): ChildProcess {
    const child = spawn('ip', ['netns', 'exec', ns, ...argv], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.children.add(child);
    child.on('exit', () => this.children.delete(child));
    return child;
  }

  /** Kills every started process and deletes every namespace (veths go with them). */
  destroy(): void {
    for (const child of this.children) child.kill('SIGKILL');
    // Processes in a namespace may outlive `ip netns exec` itself (the servers fork).
    for (const ns of [this.nodeNs, ...[...this.pods.keys()].map((p) => this.ns(p))]) {
      spawnSync('ip', ['netns', 'pids', ns], { encoding: 'utf8' })
        .stdout?.split('\n')
        .filter(Boolean)
        .forEach((pid) => {
          try {
            process.kill(Number(pid), 'SIGKILL');
          } catch {
            // already gone
          }
        });
      spawnSync('ip', ['netns', 'del', ns]);
    }
  }
}
