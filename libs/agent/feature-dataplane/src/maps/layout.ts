import { formatIpv6, parseIpv6 } from '@podmin/util-names';
import { DataplaneError } from '../dataplane-error';

// Byte layouts of the eBPF maps' keys and values: keep in step with bpf/src/service_lb.c.
// Ports are stored in network byte order, as the program compares them with packet headers.

/** BPF map types (enum bpf_map_type) of the maps the object declares. */
export const MAP_TYPE = { hash: 1, array: 2, percpuArray: 6, lruHash: 9 } as const;

/** One map as user space expects the object to declare it. */
export interface MapLayout {
  readonly name: string;
  /** enum bpf_map_type. */
  readonly type: number;
  /** Key size in bytes. */
  readonly key: number;
  /** Value size in bytes (per CPU for per-CPU maps). */
  readonly value: number;
  readonly maxEntries: number;
}

/**
 * Every map of the object: name, type, key and value sizes and bounds. BpfObject.load checks
 * the object against these before loading it and refuses an object that disagrees.
 */
export const MAPS = {
  config: { name: 'podmin_config', type: MAP_TYPE.array, key: 4, value: 24, maxEntries: 1 },
  vips: { name: 'podmin_vips', type: MAP_TYPE.hash, key: 16, value: 4, maxEntries: 65_536 },
  services: {
    name: 'podmin_services',
    type: MAP_TYPE.hash,
    key: 20,
    value: 8,
    maxEntries: 65_536,
  },
  backends: {
    name: 'podmin_backends',
    type: MAP_TYPE.hash,
    key: 8,
    value: 20,
    maxEntries: 65_536,
  },
  fwdFlows: {
    name: 'podmin_fwd_flows',
    type: MAP_TYPE.lruHash,
    key: 40,
    value: 40,
    maxEntries: 262_144,
  },
  revFlows: {
    name: 'podmin_rev_flows',
    type: MAP_TYPE.lruHash,
    key: 40,
    value: 72,
    maxEntries: 262_144,
  },
  stats: { name: 'podmin_stats', type: MAP_TYPE.percpuArray, key: 4, value: 8, maxEntries: 8 },
} as const satisfies Record<string, MapLayout>;

/** The bounds the object declares (spec: 65,536 service keys, backends and VIPs). */
export const MAP_CAPACITY = {
  vips: MAPS.vips.maxEntries,
  services: MAPS.services.maxEntries,
  backends: MAPS.backends.maxEntries,
  flows: MAPS.fwdFlows.maxEntries,
};

/** The program's name inside the object. */
export const PROGRAM = 'podmin_ingress';

/** TCX verdicts the program returns (linux/bpf.h of kernels >= 6.6). */
export const TCX = { NEXT: -1, PASS: 0, DROP: 2, REDIRECT: 7 } as const;

/** `struct rev_val` flags: FIN seen from the client, FIN seen from the backend, a reset. */
export const FLOW_FLAGS = { FIN_FWD: 1, FIN_REV: 2, RST: 4 } as const;

/** The source-NAT port range (30000-32767). */
export const SNAT_PORTS = { min: 30_000, count: 2_768 } as const;

/** IP protocol numbers the dataplane forwards. */
export const IPPROTO = { TCP: 6, UDP: 17 } as const;

/** Counters in `podmin_stats`, by index. */
export const STATS = [
  'forward',
  'reverse',
  'newFlow',
  'reject',
  'dropUnparsed',
  'snatExhausted',
  'portReused',
] as const;

/** Name of one counter. */
export type StatName = (typeof STATS)[number];

/** 16 bytes of an IPv6 address. */
export function addressBytes(address: string): Buffer {
  const groups = parseIpv6(address);
  if (!groups)
    throw new DataplaneError(
      'INVALID_ARGUMENT',
      `${JSON.stringify(address)} is not an IPv6 address`,
    );
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(g, i * 2));
  return out;
}

/** RFC 5952 text of 16 address bytes at `offset`. */
export function addressText(buf: Buffer, offset = 0): string {
  const groups: number[] = [];
  for (let i = 0; i < 8; i++) groups.push(buf.readUInt16BE(offset + i * 2));
  return formatIpv6(groups);
}

/** `struct config`: the node address SNAT uses. */
export function configValue(nodeAddress: string): Buffer {
  const out = Buffer.alloc(MAPS.config.value);
  addressBytes(nodeAddress).copy(out, 0);
  out.writeUInt32LE(1, 16);
  return out;
}

/** A u32 array index (host byte order, as the kernel reads array keys). */
export function indexKey(index: number): Buffer {
  const out = Buffer.alloc(4);
  out.writeUInt32LE(index, 0);
  return out;
}

/** `struct svc_key`. */
export function serviceKey(vip: string, port: number, proto: number): Buffer {
  return serviceKeyOf(addressBytes(vip), port, proto);
}

/** `struct svc_key` of a VIP's 16 bytes. */
export function serviceKeyOf(vip: Buffer, port: number, proto: number): Buffer {
  const out = Buffer.alloc(MAPS.services.key);
  vip.copy(out, 0);
  out.writeUInt16BE(port, 16);
  out.writeUInt8(proto, 18);
  return out;
}

/** `struct svc_val`. */
export function serviceValue(id: number, count: number): Buffer {
  const out = Buffer.alloc(MAPS.services.value);
  out.writeUInt32LE(id, 0);
  out.writeUInt32LE(count, 4);
  return out;
}

/** `struct backend_key`. */
export function backendKey(id: number, slot: number): Buffer {
  const out = Buffer.alloc(MAPS.backends.key);
  out.writeUInt32LE(id, 0);
  out.writeUInt32LE(slot, 4);
  return out;
}

/** `struct backend_val`. */
export function backendValue(address: string, port: number): Buffer {
  return backendValueOf(addressBytes(address), port);
}

/** `struct backend_val` of an address's 16 bytes. */
export function backendValueOf(address: Buffer, port: number): Buffer {
  const out = Buffer.alloc(MAPS.backends.value);
  address.copy(out, 0);
  out.writeUInt16BE(port, 16);
  return out;
}

/** A VIP's value: how many Service keys it has (the program only tests presence). */
export function vipValue(ports: number): Buffer {
  const out = Buffer.alloc(MAPS.vips.value);
  out.writeUInt32LE(ports, 0);
  return out;
}

/** One decoded `struct rev_val` (a flow as the reverse map holds it). */
export interface ReverseFlow {
  backend: string;
  backendPort: number;
  node: string;
  snatPort: number;
  proto: number;
  client: string;
  clientPort: number;
  vip: string;
  vipPort: number;
}

/** Decodes one reverse-flow key and value. */
export function reverseFlow(key: Buffer, value: Buffer): ReverseFlow {
  return {
    backend: addressText(key, 0),
    node: addressText(key, 16),
    backendPort: key.readUInt16BE(32),
    snatPort: key.readUInt16BE(34),
    proto: key.readUInt8(36),
    client: addressText(value, 0),
    vip: addressText(value, 16),
    clientPort: value.readUInt16BE(32),
    vipPort: value.readUInt16BE(34),
  };
}

/** `struct flow_key`: a flow direction's tuple (the forward map's and the reverse map's key). */
export function flowKey(
  src: string,
  dst: string,
  sport: number,
  dport: number,
  proto: number,
): Buffer {
  const out = Buffer.alloc(MAPS.fwdFlows.key);
  addressBytes(src).copy(out, 0);
  addressBytes(dst).copy(out, 16);
  out.writeUInt16BE(sport, 32);
  out.writeUInt16BE(dport, 34);
  out.writeUInt8(proto, 36);
  return out;
}

/** `struct fwd_val` with no cached route: the backend and the flow's SNAT port. */
export function forwardFlowValue(backend: string, backendPort: number, snatPort: number): Buffer {
  const out = Buffer.alloc(MAPS.fwdFlows.value);
  addressBytes(backend).copy(out, 0);
  out.writeUInt16BE(backendPort, 16);
  out.writeUInt16BE(snatPort, 18);
  return out;
}

/** `struct rev_val` with no cached route: whom the replies go back to, and the flow's state. */
export function reverseFlowValue(flow: {
  client: string;
  clientPort: number;
  vip: string;
  vipPort: number;
  /** FLOW_FLAGS bits. */
  flags: number;
  /** bpf_ktime_get_ns (CLOCK_MONOTONIC) of the flow's last packet. */
  seenNs: bigint;
}): Buffer {
  const out = Buffer.alloc(MAPS.revFlows.value);
  addressBytes(flow.client).copy(out, 0);
  addressBytes(flow.vip).copy(out, 16);
  out.writeUInt16BE(flow.clientPort, 32);
  out.writeUInt16BE(flow.vipPort, 34);
  out.writeUInt32LE(flow.flags, 36);
  out.writeBigUInt64LE(flow.seenNs, 40);
  return out;
}
