import path from 'node:path';
import protobuf from 'protobufjs';
import { PROTO_FILES, protoRoot } from '@podmin/agent-contracts';
import { hasCode } from '@podmin/util-errors';
import { nodeReport, servicePayload } from '../__fixtures__/snapshot-fixtures';
import { computeSnapshot } from './compute-snapshot';
import {
  MAX_SNAPSHOT_BYTES,
  decodeSnapshot,
  encodeServices,
  encodeSnapshot,
  type ServiceSnapshot,
} from './snapshot-codec';

const CLUSTER = 'prod';
const type = protobuf
  .loadSync(path.join(protoRoot(), PROTO_FILES.snapshot))
  .lookupType('podmin.agent.v1.ServiceSnapshot');

function sample(generation = 7): ServiceSnapshot {
  const { snapshot } = computeSnapshot({
    cluster: CLUSTER,
    generation,
    services: [
      servicePayload('shop', 'web', { app: 'web' }, [{ port: 443, targetPort: 8443 }]),
      servicePayload('shop', 'dns', { app: 'dns' }, [{ port: 53, protocol: 'UDP' }]),
      servicePayload('blog', 'web', { app: 'web' }),
    ],
    nodes: [
      nodeReport(1, [
        { namespace: 'shop', labels: { app: 'web' }, host: '1' },
        { namespace: 'shop', labels: { app: 'web' }, host: '2' },
      ]),
      nodeReport(2, [{ namespace: 'blog', labels: { app: 'web' }, host: '1' }]),
    ],
  });
  return snapshot;
}

/** Encodes an arbitrary wire object with protobufjs, bypassing the codec's rules. */
function rawEncode(wire: Record<string, unknown>): Buffer {
  return Buffer.from(type.encode(wire).finish());
}

function expectRejected(bytes: Uint8Array, pattern: RegExp, options = {}): void {
  let caught: unknown;
  try {
    decodeSnapshot(bytes, options);
  } catch (err) {
    caught = err;
  }
  expect(hasCode(caught, 'INVALID_ARGUMENT')).toBe(true);
  expect((caught as Error).message).toMatch(pattern);
}

describe('snapshot codec', () => {
  it('round-trips a snapshot and decodes the same bytes protobufjs reads', () => {
    const value = sample();
    const bytes = encodeSnapshot(value);
    expect(decodeSnapshot(bytes, { cluster: CLUSTER })).toEqual(value);
    const generic = type.toObject(type.decode(bytes), { longs: Number, enums: String });
    expect(generic.generation).toBe(7);
    expect(generic.revision).toBe(value.revision);
    expect(generic.services).toHaveLength(3);
  });

  it('encodes the header then the Services, omitting proto3 defaults', () => {
    const value = sample(0);
    const bytes = encodeSnapshot(value);
    const services = encodeServices(value.services).bytes;
    // Generation 0 is omitted: the message starts with field 2 (revision, length 64).
    expect(bytes.subarray(0, 2)).toEqual(Buffer.from([0x12, 64]));
    expect(bytes.subarray(66).equals(services)).toBe(true);
    const withGeneration = encodeSnapshot({ ...value, generation: 300 });
    expect(withGeneration.subarray(0, 3)).toEqual(Buffer.from([0x08, 0xac, 0x02]));
  });

  it('refuses to encode a snapshot whose revision or order is wrong', () => {
    const value = sample();
    expect(() => encodeSnapshot({ ...value, revision: 'f'.repeat(64) })).toThrow(/not the digest/);
    const reversed = [...value.services].reverse();
    expect(() => encodeServices(reversed)).toThrow(/sorted, unique/);
  });

  it('rejects truncated bytes and trailing garbage', () => {
    const bytes = encodeSnapshot(sample());
    expectRejected(bytes.subarray(0, bytes.length - 3), /not a ServiceSnapshot|canonical/);
    expectRejected(Buffer.concat([bytes, Buffer.from([0xff])]), /not a ServiceSnapshot|canonical/);
  });

  it('rejects unknown fields, repeated scalars and explicit defaults', () => {
    const bytes = encodeSnapshot(sample());
    // Field 15, varint 1.
    expectRejected(Buffer.concat([bytes, Buffer.from([0x78, 0x01])]), /canonical/);
    // A second generation field (the last one wins in protobuf, so it must not be allowed).
    expectRejected(Buffer.concat([Buffer.from([0x08, 0x09]), bytes]), /canonical/);
    // generation 0 written explicitly.
    const zero = sample(0);
    expectRejected(Buffer.concat([Buffer.from([0x08, 0x00]), encodeSnapshot(zero)]), /canonical/);
  });

  it('rejects a revision that is not the digest of the Services', () => {
    const value = sample();
    const wire = type.toObject(type.decode(encodeSnapshot(value)), { longs: Number });
    expectRejected(rawEncode({ ...wire, revision: '0'.repeat(64) }), /not the digest/);
  });

  it('rejects unsorted Services, bad names, VIPs, ports, protocols and addresses', () => {
    const value = sample();
    const wire = type.toObject(type.decode(encodeSnapshot(value)), { longs: Number }) as {
      services: Array<Record<string, unknown>>;
    };
    const first = wire.services[0] as Record<string, unknown>;
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ ...wire, services: [...wire.services].reverse() }, /sorted, unique/],
      [{ ...wire, services: [first, first] }, /sorted, unique/],
      [{ ...wire, services: [{ ...first, namespace: 'Shop' }] }, /DNS-1123/],
      [{ ...wire, services: [{ ...first, vip: '2600::1' }] }, /fd50:6f64:6d69::\/64/],
      [{ ...wire, services: [{ ...first, vip: 'fd50:6f64:6d69:0:0:0:0:1' }] }, /canonical IPv6/],
      [{ ...wire, services: [{ ...first, ports: [] }] }, /at least one port/],
      [
        { ...wire, services: [{ ...first, ports: [{ port: 70000, targetPort: 1, protocol: 1 }] }] },
        /1-65535/,
      ],
      [
        { ...wire, services: [{ ...first, ports: [{ port: 1, targetPort: 1, protocol: 3 }] }] },
        /protocol/,
      ],
      [
        { ...wire, services: [{ ...first, backends: [{ address: '2600:0::1', nodeId: 'n' }] }] },
        /canonical IPv6/,
      ],
      [{ ...wire, services: [{ ...first, backends: [{ address: '2600::1' }] }] }, /nodeId/],
    ];
    for (const [bad, pattern] of cases) expectRejected(rawEncode(bad), pattern);
  });

  it("rejects another cluster's VIPs when the cluster is given", () => {
    const bytes = encodeSnapshot(sample());
    expect(decodeSnapshot(bytes).services).toHaveLength(3);
    expectRejected(bytes, /not the VIP of .* in cluster staging/, { cluster: 'staging' });
  });

  it('freezes computed and decoded Services, whose encoding it keeps', () => {
    const value = sample();
    const decoded = decodeSnapshot(encodeSnapshot(value));
    for (const services of [value.services, decoded.services]) {
      expect(Object.isFrozen(services)).toBe(true);
      expect(Object.isFrozen(services[0])).toBe(true);
      expect(Object.isFrozen(services[0]?.backends[0])).toBe(true);
      expect(Object.isFrozen(services[0]?.ports[0])).toBe(true);
      expect(() => (services as unknown[]).push(services[0])).toThrow(TypeError);
    }
    expect(encodeSnapshot(decoded).equals(encodeSnapshot(value))).toBe(true);
  });

  it('rejects an oversized object before parsing it', () => {
    expectRejected(Buffer.alloc(MAX_SNAPSHOT_BYTES + 1), /exceed the 16777216-byte limit/);
  });
});
