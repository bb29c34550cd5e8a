import { createHash } from 'node:crypto';
import path from 'node:path';
import protobuf from 'protobufjs';
import { PROTO_FILES, protoRoot, snapshot } from '@podmin/agent-contracts';
import { isDns1123Label } from '@podmin/util-manifest';
import { formatIpv6, parseIpv6 } from '@podmin/util-names';
import { serviceVip } from '@podmin/util-desired-state';
import { SnapshotError } from './snapshot-error';
import { errorMessage } from '../error-message';

// Encoder choice: the contracts' ts-proto code is generated without encode methods (gRPC goes
// through @grpc/proto-loader), so bytes come from protobufjs, which loads snapshot.proto at run
// time (the same file ts-proto reads, so types and wire cannot drift). protobufjs writes fields
// in field-number order and only the fields present on the object it is given; this module hands
// it objects without proto3 defaults and with sorted lists, which makes the output canonical
// (what Go's deterministic Marshal writes for the same message): equal content, equal bytes.

/** A Service snapshot as the contracts define it (`podmin.agent.v1.ServiceSnapshot`). */
export type ServiceSnapshot = snapshot.ServiceSnapshot;
/** One Service of a snapshot. */
export type SnapshotService = snapshot.SnapshotService;
/** One port of a snapshot Service. */
export type SnapshotPort = snapshot.SnapshotPort;
/** One ready backend of a snapshot Service. */
export type SnapshotBackend = snapshot.Backend;

/**
 * Upper bound of `dns/services.pb`. The dataplane bounds Services and backend entries to 65,536
 * each; at about 80 bytes a Service and 50 a backend that is under 9 MiB, so 16 MiB leaves room
 * without letting a hostile object exhaust memory.
 */
export const MAX_SNAPSHOT_BYTES = 16 * 1024 * 1024;

const PROTOCOL_NUMBERS = { TCP: 1, UDP: 2 } as const;
const PROTOCOL_NAMES: Readonly<Record<number, snapshot.SnapshotPort_Protocol>> = {
  1: snapshot.SnapshotPort_Protocol.TCP,
  2: snapshot.SnapshotPort_Protocol.UDP,
};
const VIP_PREFIX = [0xfd50, 0x6f64, 0x6d69, 0x0000] as const;
const MAX_NODE_ID_LENGTH = 253;

let messageType: protobuf.Type | undefined;

function snapshotType(): protobuf.Type {
  messageType ??= protobuf
    .loadSync(path.join(protoRoot(), PROTO_FILES.snapshot))
    .lookupType('podmin.agent.v1.ServiceSnapshot');
  return messageType;
}

/** Plain objects protobufjs encodes, holding only the fields that differ from proto3 defaults. */
type Wire = Record<string, unknown>;

function wireServices(services: readonly SnapshotService[]): Wire {
  if (services.length === 0) return {};
  return {
    services: services.map((s) => {
      const out: Wire = {};
      if (s.namespace !== '') out.namespace = s.namespace;
      if (s.name !== '') out.name = s.name;
      if (s.vip !== '') out.vip = s.vip;
      if (s.ports.length > 0) {
        out.ports = s.ports.map((p) => {
          const port: Wire = {};
          if (p.port !== 0) port.port = p.port;
          if (p.targetPort !== 0) port.targetPort = p.targetPort;
          const protocol = protocolNumber(p.protocol);
          if (protocol !== 0) port.protocol = protocol;
          return port;
        });
      }
      if (s.backends.length > 0) {
        out.backends = s.backends.map((b) => {
          const backend: Wire = {};
          if (b.address !== '') backend.address = b.address;
          if (b.nodeId !== '') backend.nodeId = b.nodeId;
          return backend;
        });
      }
      return out;
    }),
  };
}

function protocolNumber(protocol: snapshot.SnapshotPort_Protocol): number {
  return protocol === snapshot.SnapshotPort_Protocol.TCP ||
    protocol === snapshot.SnapshotPort_Protocol.UDP
    ? PROTOCOL_NUMBERS[protocol]
    : 0;
}

function encodeWire(wire: Wire): Buffer {
  const bytes = snapshotType().encode(wire).finish();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function encodeHeader(generation: number, revision: string): Buffer {
  const wire: Wire = {};
  if (generation !== 0) wire.generation = generation;
  if (revision !== '') wire.revision = revision;
  return encodeWire(wire);
}

/** SHA-256 hex of canonical services bytes: the snapshot's revision. */
function digest(servicesBytes: Uint8Array): string {
  return createHash('sha256').update(servicesBytes).digest('hex');
}

// Services lists known to be canonical, with their encoding. Only `remember` adds entries,
// after deep-freezing the list, so a cached list cannot change after it was checked and encoded:
// computeSnapshot's and decodeSnapshot's output is encoded once however often it is written.
const encodedServices = new WeakMap<readonly SnapshotService[], EncodedServices>();

/** The canonical bytes of a Services list and their digest. */
export interface EncodedServices {
  readonly bytes: Buffer;
  readonly revision: string;
}

/**
 * The canonical encoding of a snapshot's `services` field alone and its revision (SHA-256 hex of
 * those bytes). INTERNAL when the list is not well formed (unsorted, duplicates, bad addresses).
 */
export function encodeServices(services: readonly SnapshotService[]): EncodedServices {
  const known = encodedServices.get(services);
  if (known !== undefined) return known;
  assertValid(services, 'encoding the Service snapshot');
  const bytes = encodeWire(wireServices(services));
  return { bytes, revision: digest(bytes) };
}

/**
 * Deep-freezes a Services list built canonical by construction (`computeSnapshot`'s; its specs
 * decode what it encodes strictly) and remembers its encoding, so writing it does not encode it
 * again; the list becomes immutable. Skips `encodeServices`' check, which would parse every
 * address a second time. Internal: the library index does not export it.
 */
export function sealBuiltServices(services: SnapshotService[]): EncodedServices {
  const bytes = encodeWire(wireServices(services));
  const encoded = { bytes, revision: digest(bytes) };
  remember(services, encoded);
  return encoded;
}

function remember(services: SnapshotService[], encoded: EncodedServices): void {
  for (const service of services) {
    for (const port of service.ports) Object.freeze(port);
    for (const backend of service.backends) Object.freeze(backend);
    Object.freeze(service.ports);
    Object.freeze(service.backends);
    Object.freeze(service);
  }
  Object.freeze(services);
  encodedServices.set(services, encoded);
}

/**
 * Canonical, deterministic bytes of a snapshot (same content, same bytes). The snapshot must be
 * well formed (sorted, unique, canonical addresses) and its revision must match its Services;
 * otherwise INTERNAL, since only a bug builds such a snapshot.
 */
export function encodeSnapshot(value: ServiceSnapshot): Buffer {
  checkGeneration(value.generation, 'encoding the Service snapshot', 'INTERNAL');
  const body = encodeServices(value.services);
  if (body.revision !== value.revision) {
    throw new SnapshotError(
      'INTERNAL',
      `encoding the Service snapshot: revision ${value.revision} is not the digest ${body.revision} of its Services`,
    );
  }
  // Fields 1 and 2 precede field 3, and a protobuf message is the concatenation of its fields,
  // so header ++ services bytes is the whole canonical message: the Services are encoded once.
  return Buffer.concat([encodeHeader(value.generation, value.revision), body.bytes]);
}

/** Options of {@link decodeSnapshot}. */
export interface DecodeOptions {
  /** When set, every VIP must be `serviceVip(cluster, namespace, name)` (a snapshot of this cluster). */
  cluster?: string;
}

/**
 * Strictly decodes `dns/services.pb` (INVALID_ARGUMENT otherwise): at most MAX_SNAPSHOT_BYTES;
 * only the canonical encoding is accepted (the bytes must re-encode to themselves, which rejects
 * unknown fields, repeated scalars, explicit defaults, odd varints and trailing bytes); Services
 * sorted and unique with DNS-1123 names, VIPs in fd50:6f64:6d69::/64, known protocols, ports
 * 1–65535, canonical backend addresses; the revision must be the digest of the Services.
 */
export function decodeSnapshot(bytes: Uint8Array, options: DecodeOptions = {}): ServiceSnapshot {
  const doing = 'decoding the Service snapshot dns/services.pb';
  if (bytes.byteLength > MAX_SNAPSHOT_BYTES) {
    throw new SnapshotError(
      'INVALID_ARGUMENT',
      `${doing}: ${bytes.byteLength} bytes exceed the ${MAX_SNAPSHOT_BYTES}-byte limit`,
    );
  }
  let raw: RawSnapshot;
  try {
    const type = snapshotType();
    raw = type.toObject(type.decode(bytes), {
      longs: String,
      enums: Number,
      defaults: true,
      arrays: true,
    }) as RawSnapshot;
  } catch (err) {
    throw new SnapshotError(
      'INVALID_ARGUMENT',
      `${doing}: not a ServiceSnapshot message (${errorMessage(err)})`,
      { cause: err },
    );
  }
  const generation = Number(raw.generation);
  if (String(generation) !== raw.generation) {
    throw new SnapshotError(
      'INVALID_ARGUMENT',
      `${doing}: generation ${raw.generation} is beyond 2^53`,
    );
  }
  const problems: string[] = [];
  const services = raw.services.map((s, i): SnapshotService => ({
    namespace: s.namespace,
    name: s.name,
    vip: s.vip,
    ports: s.ports.map((p, j) => {
      const protocol = PROTOCOL_NAMES[p.protocol];
      if (protocol === undefined) {
        problems.push(
          `services[${i}].ports[${j}].protocol: ${p.protocol} is not TCP (1) or UDP (2)`,
        );
      }
      return {
        port: p.port,
        targetPort: p.targetPort,
        protocol: protocol ?? snapshot.SnapshotPort_Protocol.UNRECOGNIZED,
      };
    }),
    backends: s.backends.map((b) => ({ address: b.address, nodeId: b.nodeId })),
  }));
  problems.push(...snapshotProblems(services, options.cluster));
  if (problems.length > 0) {
    throw new SnapshotError(
      'INVALID_ARGUMENT',
      `${doing}: ${problems.slice(0, 5).join('; ')}${problems.length > 5 ? `; and ${problems.length - 5} more` : ''}`,
    );
  }
  const body = encodeWire(wireServices(services));
  const canonical = Buffer.concat([encodeHeader(generation, raw.revision), body]);
  if (!canonical.equals(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))) {
    throw new SnapshotError(
      'INVALID_ARGUMENT',
      `${doing}: not the canonical encoding (unknown fields, repeated or default-valued fields, or trailing bytes)`,
    );
  }
  const revision = digest(body);
  if (revision !== raw.revision) {
    throw new SnapshotError(
      'INVALID_ARGUMENT',
      `${doing}: revision ${JSON.stringify(raw.revision)} is not the digest ${revision} of its Services`,
    );
  }
  // Checked above and canonical: remember the encoding instead of checking it again on write.
  remember(services, { bytes: body, revision });
  return { generation, revision, services };
}

interface RawSnapshot {
  generation: string;
  revision: string;
  services: Array<{
    namespace: string;
    name: string;
    vip: string;
    ports: Array<{ port: number; targetPort: number; protocol: number }>;
    backends: Array<{ address: string; nodeId: string }>;
  }>;
}

function checkGeneration(generation: number, doing: string, code: 'INTERNAL'): void {
  if (!Number.isSafeInteger(generation) || generation < 0) {
    throw new SnapshotError(
      code,
      `${doing}: generation ${generation} is not a non-negative integer`,
    );
  }
}

function assertValid(services: readonly SnapshotService[], doing: string): void {
  const problems = snapshotProblems(services, undefined);
  if (problems.length > 0) {
    throw new SnapshotError('INTERNAL', `${doing}: ${problems.slice(0, 5).join('; ')}`);
  }
}

/** True when `text` is canonical RFC 5952 IPv6 text. */
function isCanonicalIpv6(text: string): boolean {
  const groups = parseIpv6(text);
  return groups !== undefined && formatIpv6(groups) === text;
}

/** Every rule a snapshot's Services break, as `field: why` lines (none when well formed). */
function snapshotProblems(
  services: readonly SnapshotService[],
  cluster: string | undefined,
): string[] {
  const problems: string[] = [];
  let previous: SnapshotService | undefined;
  services.forEach((s, i) => {
    const at = `services[${i}]`;
    if (!isDns1123Label(s.namespace))
      problems.push(`${at}.namespace: ${JSON.stringify(s.namespace)} is not a DNS-1123 label`);
    if (!isDns1123Label(s.name))
      problems.push(`${at}.name: ${JSON.stringify(s.name)} is not a DNS-1123 label`);
    if (previous !== undefined && compareServices(previous, s) >= 0) {
      problems.push(
        `${at}: ${s.namespace}/${s.name} is not after ${previous.namespace}/${previous.name} (sorted, unique)`,
      );
    }
    previous = s;
    const vip = parseIpv6(s.vip);
    if (
      vip === undefined ||
      formatIpv6(vip) !== s.vip ||
      VIP_PREFIX.some((group, k) => vip[k] !== group)
    ) {
      problems.push(
        `${at}.vip: ${JSON.stringify(s.vip)} is not canonical IPv6 in fd50:6f64:6d69::/64`,
      );
    } else if (cluster !== undefined && s.vip !== serviceVip(cluster, s.namespace, s.name)) {
      problems.push(
        `${at}.vip: ${s.vip} is not the VIP of ${s.namespace}/${s.name} in cluster ${cluster}`,
      );
    }
    if (s.ports.length === 0) problems.push(`${at}.ports: a Service has at least one port`);
    s.ports.forEach((p, j) => {
      const pat = `${at}.ports[${j}]`;
      if (!isPortNumber(p.port)) problems.push(`${pat}.port: ${p.port} is not 1-65535`);
      if (!isPortNumber(p.targetPort))
        problems.push(`${pat}.targetPort: ${p.targetPort} is not 1-65535`);
      if (protocolNumber(p.protocol) === 0)
        problems.push(`${pat}.protocol: ${p.protocol} is not TCP or UDP`);
      const before = s.ports[j - 1];
      if (before !== undefined && comparePorts(before, p) >= 0) {
        problems.push(
          `${pat}: ${p.protocol}/${p.port} is not after ${before.protocol}/${before.port} (sorted, unique)`,
        );
      }
    });
    s.backends.forEach((b, j) => {
      const bat = `${at}.backends[${j}]`;
      if (!isCanonicalIpv6(b.address))
        problems.push(`${bat}.address: ${JSON.stringify(b.address)} is not canonical IPv6`);
      if (b.nodeId === '' || b.nodeId.length > MAX_NODE_ID_LENGTH) {
        problems.push(`${bat}.nodeId: must be 1-${MAX_NODE_ID_LENGTH} characters`);
      }
      const before = s.backends[j - 1];
      if (before !== undefined && !(before.address < b.address)) {
        problems.push(`${bat}: ${b.address} is not after ${before.address} (sorted, unique)`);
      }
    });
  });
  return problems;
}

function isPortNumber(n: number): boolean {
  return Number.isInteger(n) && n >= 1 && n <= 65535;
}

/** Snapshot order of Services: namespace, then name, by UTF-16 code unit (byte order for DNS labels). */
export function compareServices(
  a: Pick<SnapshotService, 'namespace' | 'name'>,
  b: Pick<SnapshotService, 'namespace' | 'name'>,
): number {
  return compareText(a.namespace, b.namespace) || compareText(a.name, b.name);
}

/** Snapshot order of ports: protocol name, then port number. */
export function comparePorts(a: SnapshotPort, b: SnapshotPort): number {
  return compareText(a.protocol, b.protocol) || a.port - b.port;
}

/** Locale-independent string order (never `localeCompare`, whose order varies by ICU build). */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
