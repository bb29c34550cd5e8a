import { snapshot } from '@podmin/agent-contracts';
import { serviceVip } from '@podmin/util-desired-state';
import type { ServicePayload } from '@podmin/util-manifest';
import { formatIpv6, parseIpv6 } from '@podmin/util-names';
import {
  compareServices,
  comparePorts,
  compareText,
  sealBuiltServices,
  type ServiceSnapshot,
  type SnapshotBackend,
  type SnapshotPort,
  type SnapshotService,
} from './snapshot-codec';
import { SnapshotError } from './snapshot-error';

/** One Ready Pod a node reported (only Ready Pods are reported; the caller filters). */
export interface ReadyEndpoint {
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
  /** The Pod's IPv6 address, any valid text form. */
  readonly address: string;
}

/** What one node reported in its Hello: its id, its /80 Pod prefix and its Ready Pods. */
export interface NodeEndpoints {
  readonly nodeId: string;
  /** Canonical `<address>/80`; every endpoint address must lie inside it. */
  readonly prefix: string;
  readonly endpoints: readonly ReadyEndpoint[];
}

/** Everything a snapshot is computed from. */
export interface SnapshotInput {
  /** The cluster name, for the VIPs. */
  readonly cluster: string;
  /** The Service payloads of every NodeGroup (Services are cluster-wide). */
  readonly services: readonly ServicePayload[];
  /** The reports of every node currently connected to the leader. */
  readonly nodes: readonly NodeEndpoints[];
  /** Stored as is; `writeSnapshot` replaces it with the previous generation + 1. Default 0. */
  readonly generation?: number;
}

/** Why an endpoint was left out of every Service. */
export type RefusalReason = 'bad-node-id' | 'bad-prefix' | 'bad-address' | 'outside-prefix';

/** An endpoint left out, for the caller to log. */
export interface RefusedEndpoint {
  readonly nodeId: string;
  readonly address: string;
  readonly reason: RefusalReason;
}

/** A computed snapshot with what was left out of it. */
export interface ComputedSnapshot {
  readonly snapshot: ServiceSnapshot;
  /** Endpoints refused (invalid, or outside their node's /80), in input order. */
  readonly refused: readonly RefusedEndpoint[];
  /** `namespace/name` of Service payloads given more than once with different content; the first in canonical order is used. */
  readonly conflicts: readonly string[];
}

const MAX_NODE_ID_LENGTH = 253;

/** A Service reduced to what endpoint selection and the snapshot need. */
interface DesiredService {
  namespace: string;
  name: string;
  selector: Array<[string, string]>;
  ports: SnapshotPort[];
}

/** An accepted endpoint with its canonical address. */
interface Candidate {
  namespace: string;
  labels: Readonly<Record<string, string>>;
  backend: SnapshotBackend;
}

/**
 * Computes the Service snapshot, a pure function of its input: Services sorted by
 * namespace/name with their VIP and ports; as backends every reported endpoint in the same
 * namespace whose labels carry every selector key with an equal value (Kubernetes equality
 * selection; an empty selector selects nothing) and whose address lies inside its node's /80,
 * as canonical text, sorted and deduplicated (an address claimed by several nodes keeps the
 * smallest node id). The revision is the SHA-256 of the canonical Services encoding, so equal
 * input in any order gives an equal revision and equal bytes.
 */
export function computeSnapshot(input: SnapshotInput): ComputedSnapshot {
  const { services: desired, conflicts } = desiredServices(input.services);
  const refused: RefusedEndpoint[] = [];
  const candidates = acceptedEndpoints(input.nodes, refused);

  // Index endpoints by namespace + one label so a Service scans only the Pods carrying its
  // rarest selector label, not every endpoint (10,000 Services × 30,000 Pods otherwise).
  const byLabel = new Map<string, Candidate[]>();
  for (const candidate of candidates) {
    for (const [key, value] of Object.entries(candidate.labels)) {
      const slot = labelSlot(candidate.namespace, key, value);
      const list = byLabel.get(slot);
      if (list === undefined) byLabel.set(slot, [candidate]);
      else list.push(candidate);
    }
  }

  const services = desired.map((service): SnapshotService => ({
    namespace: service.namespace,
    name: service.name,
    vip: serviceVip(input.cluster, service.namespace, service.name),
    ports: service.ports,
    backends: selectBackends(service, byLabel),
  }));
  // Sealed: the list is frozen and its bytes kept, so writing it does not encode it again.
  const { revision } = sealBuiltServices(services);
  return {
    snapshot: { generation: input.generation ?? 0, revision, services },
    refused,
    conflicts,
  };
}

function labelSlot(namespace: string, key: string, value: string): string {
  return `${namespace}\0${key}\0${value}`;
}

function selectBackends(
  service: DesiredService,
  byLabel: ReadonlyMap<string, readonly Candidate[]>,
): SnapshotBackend[] {
  if (service.selector.length === 0) return [];
  let smallest: readonly Candidate[] | undefined;
  for (const [key, value] of service.selector) {
    const list = byLabel.get(labelSlot(service.namespace, key, value)) ?? [];
    if (smallest === undefined || list.length < smallest.length) smallest = list;
  }
  const chosen = new Map<string, SnapshotBackend>();
  for (const candidate of smallest ?? []) {
    if (!service.selector.every(([key, value]) => hasLabel(candidate.labels, key, value))) continue;
    const { address, nodeId } = candidate.backend;
    const held = chosen.get(address);
    if (held === undefined || compareText(nodeId, held.nodeId) < 0)
      chosen.set(address, candidate.backend);
  }
  return [...chosen.values()].sort((a, b) => compareText(a.address, b.address));
}

function hasLabel(labels: Readonly<Record<string, string>>, key: string, value: string): boolean {
  // Own properties only: a label named `constructor` must not match through the prototype.
  return Object.prototype.hasOwnProperty.call(labels, key) && labels[key] === value;
}

/** Parses `<address>/80` with zero host bits into its first five groups. */
function parsePrefix80(prefix: string): number[] | undefined {
  const slash = prefix.indexOf('/');
  if (slash < 0 || prefix.slice(slash + 1) !== '80') return undefined;
  const groups = parseIpv6(prefix.slice(0, slash));
  if (groups === undefined || groups.slice(5).some((g) => g !== 0)) return undefined;
  return groups.slice(0, 5);
}

function acceptedEndpoints(
  nodes: readonly NodeEndpoints[],
  refused: RefusedEndpoint[],
): Candidate[] {
  const out: Candidate[] = [];
  for (const node of nodes) {
    const nodeOk = node.nodeId !== '' && node.nodeId.length <= MAX_NODE_ID_LENGTH;
    const network = parsePrefix80(node.prefix);
    for (const endpoint of node.endpoints) {
      const refuse = (reason: RefusalReason): void => {
        refused.push({ nodeId: node.nodeId, address: endpoint.address, reason });
      };
      if (!nodeOk) {
        refuse('bad-node-id');
        continue;
      }
      if (network === undefined) {
        refuse('bad-prefix');
        continue;
      }
      const groups = parseIpv6(endpoint.address);
      if (groups === undefined) {
        refuse('bad-address');
        continue;
      }
      if (network.some((g, i) => groups[i] !== g)) {
        refuse('outside-prefix');
        continue;
      }
      out.push({
        namespace: endpoint.namespace,
        labels: endpoint.labels,
        backend: { address: formatIpv6(groups), nodeId: node.nodeId },
      });
    }
  }
  return out;
}

/**
 * The Services sorted and unique by namespace/name. The index allows one owner per namespaced
 * Service, so a repeat is the same payload twice (dropped); one with different content is a
 * conflict, resolved deterministically by keeping the smallest canonical form.
 */
function desiredServices(payloads: readonly ServicePayload[]): {
  services: DesiredService[];
  conflicts: string[];
} {
  const byName = new Map<string, { service: DesiredService; canonical: string }>();
  const conflicts = new Set<string>();
  for (const payload of payloads) {
    const service = toDesiredService(payload);
    const canonical = JSON.stringify([service.selector, service.ports]);
    const id = `${service.namespace}/${service.name}`;
    const held = byName.get(id);
    if (held !== undefined && held.canonical !== canonical) conflicts.add(id);
    if (held === undefined || compareText(canonical, held.canonical) < 0) {
      byName.set(id, { service, canonical });
    }
  }
  return {
    services: [...byName.values()].map((v) => v.service).sort(compareServices),
    conflicts: [...conflicts].sort(compareText),
  };
}

/** The selector and ports of a strictly parsed Service payload (`parseServicePayload`'s shape). */
function toDesiredService(payload: ServicePayload): DesiredService {
  const doing = `selecting backends for Service ${payload.namespace}/${payload.name}`;
  const spec = payload.object.spec;
  if (!isRecord(spec) || !isRecord(spec.selector) || !Array.isArray(spec.ports)) {
    throw new SnapshotError(
      'INTERNAL',
      `${doing}: the payload has no spec.selector and spec.ports`,
    );
  }
  const selector: Array<[string, string]> = [];
  for (const [key, value] of Object.entries(spec.selector)) {
    if (typeof value !== 'string') {
      throw new SnapshotError('INTERNAL', `${doing}: selector ${key} is not a string`);
    }
    selector.push([key, value]);
  }
  selector.sort((a, b) => compareText(a[0], b[0]));
  const ports = spec.ports.map((item: unknown): SnapshotPort => {
    if (
      !isRecord(item) ||
      typeof item.port !== 'number' ||
      typeof item.targetPort !== 'number' ||
      (item.protocol !== 'TCP' && item.protocol !== 'UDP')
    ) {
      throw new SnapshotError('INTERNAL', `${doing}: a port is not {port, targetPort, protocol}`);
    }
    return {
      port: item.port,
      targetPort: item.targetPort,
      protocol:
        item.protocol === 'TCP'
          ? snapshot.SnapshotPort_Protocol.TCP
          : snapshot.SnapshotPort_Protocol.UDP,
    };
  });
  ports.sort(comparePorts);
  return { namespace: payload.namespace, name: payload.name, selector, ports };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
