import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { inIpv6Prefix } from '@podmin/util-names';
import { DataplaneError } from '../dataplane-error';

/** Why the dataplane attaches to an interface (spec: Pod veths, the Pod ENI, the default route). */
export type InterfaceRole = 'pod-veth' | 'pod-eni' | 'default-route';

/** One interface the program belongs on. */
export interface DataplaneInterface {
  readonly name: string;
  readonly ifindex: number;
  readonly roles: readonly InterfaceRole[];
}

/** Where the current interface set comes from (re-read on every check). */
export interface InterfaceSource {
  list(): Promise<DataplaneInterface[]>;
}

/** The parts of iproute2's JSON output the selection reads. */
export interface RouteTables {
  /** `ip -6 -j route show table all`. */
  routes: readonly { dst?: string; dev?: string; table?: string; metric?: number; type?: string }[];
  /** `ip -6 -j rule show`. */
  rules: readonly { src?: string; srclen?: number; table?: string }[];
  /** `ip -j link show`. */
  links: readonly { ifname?: string; ifindex?: number; link_type?: string }[];
}

/**
 * Picks the interfaces the dataplane attaches to, from the routing state:
 * - Pod veths: the device of each /128 route to an address inside the Pod prefix (ptp CNI
 *   keeps one per Pod through its host-side veth);
 * - the Pod ENI: the default route's device in the table a rule sends Pod-prefix sources to;
 * - the default route: the main table's IPv6 default route with the lowest metric.
 * Only Ethernet devices qualify (the program parses an Ethernet header).
 */
export function selectInterfaces(tables: RouteTables, podPrefix: string): DataplaneInterface[] {
  if (!inIpv6Prefix(podPrefix, podPrefix))
    throw new DataplaneError('INVALID_ARGUMENT', `bad Pod prefix ${podPrefix}`);
  const inPrefix = (address: string): boolean => inIpv6Prefix(address, podPrefix);
  const roles = new Map<string, Set<InterfaceRole>>();
  const add = (dev: string | undefined, role: InterfaceRole): void => {
    if (!dev) return;
    const set = roles.get(dev) ?? new Set();
    set.add(role);
    roles.set(dev, set);
  };
  const main = (r: { table?: string }): boolean => r.table === undefined || r.table === 'main';
  for (const r of tables.routes) {
    if (!main(r) || (r.type !== undefined && r.type !== 'unicast') || !r.dst) continue;
    const host = !r.dst.includes('/') || r.dst.endsWith('/128');
    if (r.dst !== 'default' && host && inPrefix(r.dst)) add(r.dev, 'pod-veth');
  }
  const lowest = (table: (r: { table?: string }) => boolean): string | undefined =>
    tables.routes
      .filter((r) => table(r) && r.dst === 'default' && r.dev)
      .sort((a, b) => (a.metric ?? 0) - (b.metric ?? 0))[0]?.dev;
  add(lowest(main), 'default-route');
  for (const rule of tables.rules) {
    if (!rule.src || rule.src === 'all' || !rule.table || !inPrefix(rule.src)) continue;
    if ((rule.srclen ?? 128) < 80) continue;
    add(
      lowest((r) => r.table === rule.table),
      'pod-eni',
    );
  }
  const out: DataplaneInterface[] = [];
  for (const link of tables.links) {
    const set = link.ifname ? roles.get(link.ifname) : undefined;
    if (!set || link.ifindex === undefined || link.link_type !== 'ether') continue;
    out.push({ name: link.ifname as string, ifindex: link.ifindex, roles: [...set].sort() });
  }
  return out.sort((a, b) => a.ifindex - b.ifindex);
}

const run = promisify(execFile);

async function ipJson(args: string[]): Promise<unknown[]> {
  try {
    const { stdout } = await run('ip', ['-j', ...args], { timeout: 10_000, maxBuffer: 64 << 20 });
    const parsed: unknown = JSON.parse(stdout.trim() === '' ? '[]' : stdout);
    return Array.isArray(parsed) ? (parsed as unknown[]) : [];
  } catch (err) {
    throw new DataplaneError('SERVICE_UNAVAILABLE', `read ip ${args.join(' ')}`, { cause: err });
  }
}

/** The host's interfaces as iproute2 (`ip -j`) reports them, selected for `podPrefix`. */
export class IprouteInterfaces implements InterfaceSource {
  constructor(private readonly podPrefix: string) {}

  async list(): Promise<DataplaneInterface[]> {
    const [routes, rules, links] = await Promise.all([
      ipJson(['-6', 'route', 'show', 'table', 'all']),
      ipJson(['-6', 'rule', 'show']),
      ipJson(['link', 'show']),
    ]);
    return selectInterfaces({ routes, rules, links } as unknown as RouteTables, this.podPrefix);
  }
}
