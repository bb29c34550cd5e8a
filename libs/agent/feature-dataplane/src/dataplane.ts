import fs from 'node:fs';
import type { snapshot } from '@podmin/agent-contracts';
import type { StructuredLogger } from '@podmin/agent-util-logging';
import { parseIpv6 } from '@podmin/util-names';
import type { BpfMap } from './bpf/bpf-map';
import { BpfObject, type TcxLink } from './bpf/bpf-object';
import { DataplaneError } from './dataplane-error';
import type { DataplaneInterface, InterfaceSource } from './interfaces/interfaces';
import { MAPS, PROGRAM, STATS, configValue, indexKey, type StatName } from './maps/layout';
import { MapProgrammer, type ProgramResult } from './maps/map-programmer';

/** The loaded object as the dataplane uses it (BpfObject; tests may substitute). */
export interface LoadedProgram {
  map(name: string, keySize: number, valueSize: number): BpfMap;
  attachIngress(ifindex: number): TcxLink;
  close(): void;
}

/** Everything the dataplane is built from. */
export interface DataplaneOptions {
  /** The committed object (`bpf/obj/service_lb.o`, or the copy beside the bundle). */
  objectPath: string;
  /** The node IPv6 flows are source-NATed to; needed only once a Service exists. */
  nodeAddress: string;
  interfaces: InterfaceSource;
  logger: StructuredLogger;
  /** Loads the object (default: libbpf). */
  load?: (objectPath: string) => LoadedProgram;
}

/** What the dataplane does now. */
export interface DataplaneStatus {
  /** Whether the program is loaded and attached (false with no Services). */
  attached: boolean;
  /** Interfaces it is attached to, by name. */
  interfaces: string[];
  /** `revision` of the snapshot the maps hold; '' before the first. */
  revision: string;
  vips: number;
  serviceKeys: number;
  backends: number;
  /** Why the last snapshot or interface check did not fully apply, if it did not. */
  problem: string | undefined;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Whether `address` can be a source-NAT address: a unicast IPv6 that is not loopback or link-local. */
function routableIpv6(address: string): boolean {
  const g = parseIpv6(address);
  if (!g) return false;
  if (g.every((x, i) => x === (i === 7 ? 1 : 0)) || g.every((x) => x === 0)) return false;
  const first = g[0] as number;
  return (first & 0xffc0) !== 0xfe80 && (first & 0xff00) !== 0xff00;
}

/**
 * The node's Service VIP dataplane: loads the eBPF object when the first Service appears,
 * programs its maps from each snapshot by difference, keeps the program attached at TCX
 * ingress of every interface the source selects (re-read on every `refresh`), and detaches
 * and frees everything when no Service is left or on `close`.
 */
export class Dataplane {
  private loaded:
    | {
        program: LoadedProgram;
        programmer: MapProgrammer;
        stats: BpfMap;
        revFlows: BpfMap;
        fwdFlows: BpfMap;
      }
    | undefined;
  private readonly links = new Map<number, { link: TcxLink; iface: DataplaneInterface }>();
  private state: DataplaneStatus = {
    attached: false,
    interfaces: [],
    revision: '',
    vips: 0,
    serviceKeys: 0,
    backends: 0,
    problem: undefined,
  };
  private interfaceProblem: string | undefined;
  private programProblem: string | undefined;

  constructor(private readonly options: DataplaneOptions) {}

  /** The current state. */
  status(): DataplaneStatus {
    return { ...this.state, problem: this.programProblem ?? this.interfaceProblem };
  }

  /** Follows one snapshot; a failure keeps what was programmed and is reported in `status`. */
  async apply(snap: snapshot.ServiceSnapshot): Promise<ProgramResult | undefined> {
    const services = snap.services.filter((s) => s.ports.length > 0);
    if (services.length === 0) {
      this.detach('no Services in the snapshot');
      this.state = { ...this.state, revision: snap.revision, vips: 0, serviceKeys: 0, backends: 0 };
      this.programProblem = undefined;
      return undefined;
    }
    let result: ProgramResult;
    try {
      const loaded = this.ensureLoaded();
      const started = process.hrtime.bigint();
      result = loaded.programmer.program(services);
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      this.options.logger.event('info', 'program Service maps', {
        revision: snap.revision,
        ...result,
        ms: Math.round(ms * 10) / 10,
      });
    } catch (err) {
      this.programProblem = `snapshot ${snap.revision} not programmed: ${messageOf(err)}`;
      this.options.logger.event('error', 'program Service maps', { error: this.programProblem });
      return undefined;
    }
    this.programProblem = undefined;
    this.state = {
      ...this.state,
      vips: result.vips,
      serviceKeys: result.serviceKeys,
      backends: result.backends,
    };
    await this.refresh();
    // The revision last: a reader that sees it sees the interfaces checked for it too.
    this.state = { ...this.state, revision: snap.revision };
    return result;
  }

  /** Re-reads the interfaces: attaches to new ones, lets go of those that went away. */
  async refresh(): Promise<void> {
    const loaded = this.loaded;
    if (!loaded) return;
    let wanted: DataplaneInterface[];
    try {
      wanted = await this.options.interfaces.list();
    } catch (err) {
      this.interfaceProblem = `interfaces not checked: ${messageOf(err)}`;
      return;
    }
    if (this.loaded !== loaded) return;
    const problems: string[] = [];
    const keep = new Set(wanted.map((i) => i.ifindex));
    for (const [ifindex, { link, iface }] of this.links) {
      if (keep.has(ifindex)) continue;
      link.close();
      this.links.delete(ifindex);
      this.options.logger.event('info', 'detach dataplane', { interface: iface.name });
    }
    for (const iface of wanted) {
      if (this.links.has(iface.ifindex)) continue;
      try {
        const link = loaded.program.attachIngress(iface.ifindex);
        this.links.set(iface.ifindex, { link, iface });
        this.options.logger.event('info', 'attach dataplane', {
          interface: iface.name,
          ifindex: iface.ifindex,
          roles: iface.roles.join(','),
        });
      } catch (err) {
        problems.push(`${iface.name}: ${messageOf(err)}`);
      }
    }
    this.interfaceProblem =
      problems.length > 0 ? `not attached to ${problems.join('; ')}` : undefined;
    if (problems.length > 0)
      this.options.logger.event('warn', 'attach dataplane', { error: this.interfaceProblem });
    this.state = {
      ...this.state,
      attached: this.links.size > 0,
      interfaces: [...this.links.values()].map((l) => l.iface.name).sort(),
    };
  }

  /** Per-counter totals over every CPU (zeros when not loaded). */
  counters(): Record<StatName, number> {
    const stats = this.loaded?.stats;
    if (!stats) return Object.fromEntries(STATS.map((s) => [s, 0])) as Record<StatName, number>;
    return statCounters(stats);
  }

  /** Entries in the forward and reverse flow maps (tests and diagnostics; walks the maps). */
  flowMaps(): { fwd: BpfMap; rev: BpfMap } | undefined {
    return this.loaded ? { fwd: this.loaded.fwdFlows, rev: this.loaded.revFlows } : undefined;
  }

  /** Detaches from every interface and frees the object. */
  close(): void {
    this.detach('stopping');
  }

  private ensureLoaded(): NonNullable<Dataplane['loaded']> {
    if (this.loaded) return this.loaded;
    if (!routableIpv6(this.options.nodeAddress))
      throw new DataplaneError(
        'SERVICE_UNAVAILABLE',
        `Services need a routable node IPv6 to source-NAT flows to; this node has ${this.options.nodeAddress}`,
      );
    const load = this.options.load ?? ((file: string) => BpfObject.load(file, PROGRAM));
    const program = load(this.options.objectPath);
    try {
      const m = (spec: { name: string; key: number; value: number }): BpfMap =>
        program.map(spec.name, spec.key, spec.value);
      m(MAPS.config).update(indexKey(0), configValue(this.options.nodeAddress));
      // Percpu values come back as one 8-byte slot per possible CPU.
      const cpus = possibleCpus();
      const loaded = {
        program,
        programmer: new MapProgrammer({
          vips: m(MAPS.vips),
          services: m(MAPS.services),
          backends: m(MAPS.backends),
        }),
        stats: program.map(MAPS.stats.name, MAPS.stats.key, MAPS.stats.value * cpus),
        fwdFlows: m(MAPS.fwdFlows),
        revFlows: m(MAPS.revFlows),
      };
      this.loaded = loaded;
      this.options.logger.event('info', 'load dataplane', {
        object: this.options.objectPath,
        nodeAddress: this.options.nodeAddress,
      });
      return loaded;
    } catch (err) {
      program.close();
      throw err;
    }
  }

  private detach(why: string): void {
    for (const { link } of this.links.values()) link.close();
    this.links.clear();
    if (this.loaded) {
      this.loaded.program.close();
      this.loaded = undefined;
      this.options.logger.event('info', 'detach dataplane', { reason: why });
    }
    this.interfaceProblem = undefined;
    this.state = { ...this.state, attached: false, interfaces: [] };
  }
}

/** Per-counter totals over every CPU of `podmin_stats`, opened with one 8-byte slot per CPU. */
export function statCounters(stats: BpfMap): Record<StatName, number> {
  const out = Object.fromEntries(STATS.map((s) => [s, 0])) as Record<StatName, number>;
  STATS.forEach((name, i) => {
    const value = stats.lookup(indexKey(i));
    if (!value) return;
    let sum = 0;
    for (let off = 0; off + 8 <= value.length; off += 8) sum += Number(value.readBigUInt64LE(off));
    out[name] = sum;
  });
  return out;
}

/** Number of possible CPUs (the kernel sizes per-CPU map values by it). */
export function possibleCpus(file = '/sys/devices/system/cpu/possible'): number {
  const text = fs.readFileSync(file, 'utf8').trim();
  let n = 0;
  for (const part of text.split(',')) {
    const [a, b] = part.split('-').map(Number);
    n += b === undefined ? 1 : b - (a ?? 0) + 1;
  }
  return n;
}
