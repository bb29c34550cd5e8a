import { formatIpv6, parseIpv6 } from '@podmin/util-names';
import { DataplaneError } from '../dataplane-error';

// Byte layouts of the eBPF maps' keys and values: keep in step with bpf/src/service_lb.c.
// Ports are stored in network byte order, as the program compares them with packet headers.

/** Map names and their key and value sizes, as the object declares them. */
export const MAPS = {
  config: { name: 'podmin_config', key: 4, value: 24 },
  vips: { name: 'podmin_vips', key: 16, value: 4 },
  services: { name: 'podmin_services', key: 20, value: 8 },
  backends: { name: 'podmin_backends', key: 8, value: 20 },
  fwdFlows: { name: 'podmin_fwd_flows', key: 40, value: 40 },
  revFlows: { name: 'podmin_rev_flows', key: 40, value: 72 },
  stats: { name: 'podmin_stats', key: 4, value: 8 },
} as const;

/** The bounds the object declares (spec: 65,536 service keys, backends and VIPs). */
export const MAP_CAPACITY = { vips: 65_536, services: 65_536, backends: 65_536, flows: 262_144 };

/** The program's name inside the object. */
export const PROGRAM = 'podmin_ingress';

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
