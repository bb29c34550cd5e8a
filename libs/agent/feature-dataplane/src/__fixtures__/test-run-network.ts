import { spawnSync } from 'node:child_process';

function ip(args: string[]): string {
  const r = spawnSync('ip', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ip ${args.join(' ')}: ${r.stderr.trim()}`);
  return r.stdout;
}

function link(ns: string, name: string): { ifindex: number; mac: string } {
  const [info] = JSON.parse(ip(['-n', ns, '-j', 'link', 'show', name])) as {
    ifindex: number;
    address: string;
  }[];
  if (!info) throw new Error(`no link ${name} in ${ns}`);
  return { ifindex: info.ifindex, mac: info.address };
}

/**
 * A network namespace whose FIB routes every IPv6 destination out of one veth to a gateway with
 * a permanent neighbour entry, so bpf_fib_lookup answers SUCCESS with known MAC addresses when
 * the dataplane program runs under BPF_PROG_TEST_RUN there (inNetworkNamespace). Packets come
 * in on the veth's peer (`ingressIfindex`); nothing is ever sent.
 */
export class TestRunNetwork {
  /** The gateway's MAC address: the destination MAC a forwarded packet gets. */
  static readonly GATEWAY_MAC = '02:00:00:00:aa:02';

  private constructor(
    readonly ns: string,
    readonly ingressIfindex: number,
    readonly egressIfindex: number,
    /** The egress veth's MAC: the source MAC a forwarded packet gets. */
    readonly egressMac: string,
  ) {}

  /** Whether this machine can make it (root and iproute2). */
  static usable(): string | undefined {
    if (process.getuid?.() !== 0) return 'needs root (eBPF and network namespaces)';
    const probe = `pdtrprobe${process.pid}`;
    const r = spawnSync('ip', ['netns', 'add', probe], { encoding: 'utf8' });
    if (r.status !== 0) return `cannot create a network namespace: ${r.stderr.trim()}`;
    spawnSync('ip', ['netns', 'del', probe]);
    return undefined;
  }

  /** Creates namespace `ns` (destroy removes it). */
  static create(ns: string): TestRunNetwork {
    ip(['netns', 'add', ns]);
    try {
      const r = spawnSync('ip', [
        'netns',
        'exec',
        ns,
        'sysctl',
        '-qw',
        'net.ipv6.conf.all.forwarding=1',
      ]);
      if (r.status !== 0) throw new Error(`forwarding in ${ns}: ${String(r.stderr)}`);
      ip(['-n', ns, 'link', 'set', 'lo', 'up']);
      ip(['-n', ns, 'link', 'add', 'trout', 'type', 'veth', 'peer', 'name', 'trin']);
      ip(['-n', ns, 'link', 'set', 'trout', 'up']);
      ip(['-n', ns, 'link', 'set', 'trin', 'up']);
      ip([
        '-n',
        ns,
        '-6',
        'neigh',
        'replace',
        'fe80::2',
        'lladdr',
        TestRunNetwork.GATEWAY_MAC,
        'dev',
        'trout',
        'nud',
        'permanent',
      ]);
      ip(['-n', ns, '-6', 'route', 'add', 'default', 'via', 'fe80::2', 'dev', 'trout']);
      const out = link(ns, 'trout');
      return new TestRunNetwork(ns, link(ns, 'trin').ifindex, out.ifindex, out.mac);
    } catch (err) {
      spawnSync('ip', ['netns', 'del', ns]);
      throw err;
    }
  }

  /** Deletes the namespace (its veths go with it). */
  destroy(): void {
    spawnSync('ip', ['netns', 'del', this.ns]);
  }
}
