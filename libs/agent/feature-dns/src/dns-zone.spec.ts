import * as dnsPacket from 'dns-packet';
import type { Answer, OptAnswer, Packet, RecordClass, RecordType, SoaAnswer } from 'dns-packet';
import { DNS_TTL_SECONDS } from '@podmin/agent-util-config';
import { serviceVip } from '@podmin/util-desired-state';
import { hasCode } from '@podmin/util-errors';
import { optRecord } from './__fixtures__/opt-record';
import { testZone, WEB_VIP } from './__fixtures__/test-zone';
import { encodeReply, udpReplyLimit, type ReplyParts } from './dns-reply-encoding';
import { DnsZone } from './dns-zone';

type Decoded = dnsPacket.DecodedPacket & { rcode: string; opcode: string };

// The snapshot lists product/database twice.
const zone = testZone([{ namespace: 'product', name: 'database' }]);

/** dns-packet encodes ANY (255) but its types omit it. */
type QueryType = RecordType | 'ANY';

interface QueryOptions {
  type?: QueryType;
  klass?: RecordClass;
  id?: number;
  flags?: number;
  edns?: Partial<OptAnswer> | false;
}

function query(name: string, options: QueryOptions = {}): Buffer {
  const packet: Packet = {
    type: 'query',
    id: options.id ?? 0x1234,
    flags: options.flags ?? dnsPacket.RECURSION_DESIRED,
    questions: [
      { name, type: (options.type ?? 'AAAA') as RecordType, class: options.klass ?? 'IN' },
    ],
    additionals: options.edns ? [optRecord(options.edns)] : [],
  };
  return dnsPacket.encode(packet);
}

function ask(packet: Buffer, transport: 'udp' | 'tcp' = 'udp'): Decoded {
  const reply = zone.answer(packet, transport);
  if (reply === undefined) throw new Error('dropped');
  return dnsPacket.decode(reply) as Decoded;
}

function soaOf(reply: Decoded): SoaAnswer {
  const [soa] = reply.authorities ?? [];
  if (soa?.type !== 'SOA') throw new Error('no SOA in authority');
  return soa;
}

function optOf(reply: Decoded): OptAnswer | undefined {
  return (reply.additionals ?? []).find((a): a is OptAnswer => a.type === 'OPT');
}

describe('DnsZone answers', () => {
  it('answers AAAA with the VIP and TTL 5, authoritatively, keeping ID, RD and question', () => {
    const reply = ask(query('web.default.svc.cluster.local', { id: 4711 }));
    expect(reply).toMatchObject({ id: 4711, rcode: 'NOERROR', flag_aa: true, flag_qr: true });
    expect(reply.flag_rd).toBe(true);
    expect(reply.flag_ra).toBe(false);
    expect(reply.answers).toEqual([
      expect.objectContaining({
        type: 'AAAA',
        name: 'web.default.svc.cluster.local',
        ttl: 5,
        data: WEB_VIP,
      }),
    ]);
    expect(WEB_VIP).toBe('fd50:6f64:6d69:0:cca7:4758:e220:5703');
    expect(reply.questions).toEqual([
      { name: 'web.default.svc.cluster.local', type: 'AAAA', class: 'IN' },
    ]);
    expect(reply.authorities).toEqual([]);
  });

  it("carries the agent's one DNS TTL constant in answers, NS and the SOA's negative TTL", () => {
    // podmin-agent's shutdown margin is derived from the same constant (agent.spec.ts in
    // feature-supervisor): changing it changes both.
    const aaaa = ask(query('web.default.svc.cluster.local'));
    const nodata = ask(query('web.default.svc.cluster.local', { type: 'TXT' }));
    const ns = ask(query('svc.cluster.local', { type: 'NS' }));
    expect({
      aaaa: aaaa.answers?.map((a) => (a.type === 'OPT' ? undefined : a.ttl)),
      ns: ns.answers?.map((a) => (a.type === 'OPT' ? undefined : a.ttl)),
      soaTtl: soaOf(nodata).ttl,
      soaMinimum: soaOf(nodata).data.minimum,
    }).toEqual({
      aaaa: [DNS_TTL_SECONDS],
      ns: [DNS_TTL_SECONDS],
      soaTtl: DNS_TTL_SECONDS,
      soaMinimum: DNS_TTL_SECONDS,
    });
  });

  it('keeps each ID, question and EDNS apart when the same reply is served again', () => {
    for (const [id, name, edns] of [
      [1, 'web.default.svc.cluster.local', false],
      [2, 'WEB.default.svc.cluster.local', false],
      [3, 'web.DEFAULT.svc.cluster.local', true],
      [4, 'web.default.svc.cluster.local', true],
    ] as const) {
      const reply = ask(query(name, { id, edns: edns ? {} : false }));
      expect(reply.id).toBe(id);
      expect(reply.questions?.[0]?.name).toBe(name);
      expect(reply.answers?.[0]).toMatchObject({ data: WEB_VIP });
      expect(optOf(reply) !== undefined).toBe(edns);
    }
  });

  it('gives the AAAA content for ANY and with class ANY', () => {
    expect(ask(query('web.default.svc.cluster.local', { type: 'ANY' })).answers).toEqual([
      expect.objectContaining({ type: 'AAAA', data: WEB_VIP }),
    ]);
    expect(
      ask(query('web.default.svc.cluster.local', { klass: 'ANY' })).answers?.[0],
    ).toMatchObject({ data: WEB_VIP });
  });

  it('matches names case-insensitively and echoes the question bytes exactly (0x20)', () => {
    const packet = query('WeB.DeFaulT.SVC.cluster.LOCAL');
    const raw = zone.answer(packet, 'udp');
    const reply = dnsPacket.decode(raw!) as Decoded;
    expect(reply.answers?.[0]).toMatchObject({ type: 'AAAA', data: WEB_VIP });
    expect(reply.questions?.[0]?.name).toBe('WeB.DeFaulT.SVC.cluster.LOCAL');
    const questionBytes = packet.subarray(12, packet.length);
    expect(raw!.subarray(12, 12 + questionBytes.length).equals(questionBytes)).toBe(true);
  });

  it('folds ASCII only: a non-ASCII look-alike is not a Service', () => {
    // U+212A KELVIN SIGN lower-cases to "k" in JavaScript; DNS compares ASCII only.
    const kelvin = DnsZone.build({
      cluster: 'c',
      generation: 1,
      services: [{ namespace: 'default', name: 'kube' }],
    });
    const reply = kelvin.answer(query('\u212Aube.default.svc.cluster.local'), 'udp');
    expect((dnsPacket.decode(reply!) as Decoded).rcode).toBe('NXDOMAIN');
    expect(kelvin.answer(query('KUBE.default.svc.cluster.local'), 'udp')).toBeDefined();
    expect(
      (dnsPacket.decode(kelvin.answer(query('KUBE.default.svc.cluster.local'), 'udp')!) as Decoded)
        .answers,
    ).toHaveLength(1);
  });

  it('gives NODATA with the SOA (negative TTL 5, serial = generation) for other types', () => {
    for (const type of ['A', 'TXT', 'MX', 'SRV', 'CNAME'] as const) {
      const reply = ask(query('web.default.svc.cluster.local', { type }));
      expect(reply).toMatchObject({ rcode: 'NOERROR', flag_aa: true, answers: [] });
      const soa = soaOf(reply);
      expect(soa).toMatchObject({ name: 'svc.cluster.local', ttl: 5 });
      expect(soa.data).toMatchObject({
        mname: 'ns.svc.cluster.local',
        rname: 'hostmaster.svc.cluster.local',
        serial: 42,
        minimum: 5,
      });
    }
  });

  it('gives NXDOMAIN with the SOA for unknown names, names below a Service and empty namespaces', () => {
    for (const name of [
      'nope.default.svc.cluster.local',
      'web.other.svc.cluster.local',
      'x.web.default.svc.cluster.local',
      '_http._tcp.web.default.svc.cluster.local',
      'other.svc.cluster.local',
    ]) {
      const reply = ask(query(name));
      expect({ name, rcode: reply.rcode, aa: reply.flag_aa }).toEqual({
        name,
        rcode: 'NXDOMAIN',
        aa: true,
      });
      expect(reply.answers).toEqual([]);
      expect(soaOf(reply).data.minimum).toBe(5);
      expect(soaOf(reply).ttl).toBe(5);
    }
  });

  it('gives NODATA, not NXDOMAIN, for a namespace that has a Service and for the NS host', () => {
    for (const name of ['default.svc.cluster.local', 'PRODUCT.svc.cluster.local']) {
      for (const type of ['AAAA', 'A', 'ANY'] as const) {
        const reply = ask(query(name, { type }));
        expect({ name, type, rcode: reply.rcode, answers: reply.answers }).toEqual({
          name,
          type,
          rcode: 'NOERROR',
          answers: [],
        });
        expect(soaOf(reply).data.minimum).toBe(5);
      }
    }
    expect(ask(query('ns.svc.cluster.local')).rcode).toBe('NOERROR');
  });

  it('answers SOA, NS and ANY at the apex, NODATA for other types there', () => {
    const soa = ask(query('svc.cluster.local', { type: 'SOA' }));
    expect(soa.answers).toEqual([
      expect.objectContaining({ type: 'SOA', name: 'svc.cluster.local' }),
    ]);
    expect(soa.flag_aa).toBe(true);
    expect(ask(query('svc.cluster.local', { type: 'NS' })).answers).toEqual([
      expect.objectContaining({ type: 'NS', data: 'ns.svc.cluster.local', ttl: 5 }),
    ]);
    expect(ask(query('Svc.Cluster.Local', { type: 'ANY' })).answers?.map((a) => a.type)).toEqual([
      'SOA',
      'NS',
    ]);
    const a = ask(query('svc.cluster.local', { type: 'A' }));
    expect(a).toMatchObject({ rcode: 'NOERROR', answers: [] });
    expect(soaOf(a).type).toBe('SOA');
  });

  it('refuses names outside the zone, including `. NS`, without AA', () => {
    for (const [name, type] of [
      ['.', 'NS'],
      ['cluster.local', 'SOA'],
      ['local', 'AAAA'],
      ['example.com', 'AAAA'],
      ['svc.cluster.local.evil', 'AAAA'],
      ['web.default.svc.cluster', 'AAAA'],
    ] as const) {
      const reply = ask(query(name, { type }));
      expect({ name, rcode: reply.rcode, aa: reply.flag_aa, answers: reply.answers }).toEqual({
        name,
        rcode: 'REFUSED',
        aa: false,
        answers: [],
      });
      expect(reply.questions?.[0]?.name).toBe(name);
    }
  });

  it('refuses other classes and zone transfers', () => {
    expect(ask(query('web.default.svc.cluster.local', { klass: 'CH' })).rcode).toBe('REFUSED');
    expect(ask(query('svc.cluster.local', { type: 'AXFR' }), 'tcp').rcode).toBe('REFUSED');
    expect(ask(query('svc.cluster.local', { type: 'IXFR' })).rcode).toBe('REFUSED');
  });

  it('echoes EDNS(0) with its own UDP size and the DO bit', () => {
    const reply = ask(query('web.default.svc.cluster.local', { edns: { flags: 0x8000 } }));
    expect(optOf(reply)).toMatchObject({
      udpPayloadSize: 1232,
      ednsVersion: 0,
      extendedRcode: 0,
      flag_do: true,
    });
    expect(optOf(ask(query('web.default.svc.cluster.local')))).toBeUndefined();
    expect(optOf(ask(query('nope.default.svc.cluster.local', { edns: {} })))).toMatchObject({
      udpPayloadSize: 1232,
    });
  });

  it('answers EDNS version 1 with BADVERS (extended rcode 16) and the question', () => {
    const reply = ask(query('web.default.svc.cluster.local', { edns: { ednsVersion: 1 } }));
    const opt = optOf(reply);
    expect(opt).toMatchObject({ extendedRcode: 1, ednsVersion: 0 });
    expect((opt?.extendedRcode ?? 0) << 4).toBe(16);
    expect(reply.rcode).toBe('NOERROR');
    expect(reply.answers).toEqual([]);
    expect(reply.questions).toHaveLength(1);
    expect(zone.resolve(query('x', { edns: { ednsVersion: 1 } }), 'udp')).toMatchObject({
      rcode: 'BADVERS',
    });
  });

  it('answers opcodes other than QUERY with NOTIMP', () => {
    for (const opcode of [1, 2, 4, 5]) {
      const packet = query('web.default.svc.cluster.local');
      packet.writeUInt16BE(packet.readUInt16BE(2) | (opcode << 11), 2);
      const reply = ask(packet);
      expect({ opcode, rcode: reply.rcode, answers: reply.answers }).toEqual({
        opcode,
        rcode: 'NOTIMP',
        answers: [],
      });
      expect((reply.flags ?? 0) >> 11).toBe(opcode);
    }
  });

  it('drops responses (QR=1) and packets that do not parse', () => {
    const response = query('web.default.svc.cluster.local');
    response.writeUInt16BE(response.readUInt16BE(2) | 0x8000, 2);
    expect(zone.resolve(response, 'udp')).toEqual({ kind: 'drop', reason: 'response' });
    const good = query('web.default.svc.cluster.local');
    for (const cut of [0, 5, 11, 12, 20, good.length - 1]) {
      expect(zone.resolve(good.subarray(0, cut), 'udp')).toEqual({
        kind: 'drop',
        reason: 'malformed',
      });
    }
  });

  it('answers FORMERR for no question, several questions, several OPTs and trailing bytes', () => {
    const none = dnsPacket.encode({ type: 'query', id: 9, questions: [] });
    const two = dnsPacket.encode({
      type: 'query',
      id: 9,
      questions: [
        { name: 'web.default.svc.cluster.local', type: 'AAAA' },
        { name: 'database.product.svc.cluster.local', type: 'AAAA' },
      ],
    });
    const opt = optRecord({ udpPayloadSize: 1232 });
    const twoOpts = dnsPacket.encode({
      type: 'query',
      id: 9,
      questions: [{ name: 'web.default.svc.cluster.local', type: 'AAAA' }],
      additionals: [opt, opt],
    });
    const trailing = Buffer.concat([query('web.default.svc.cluster.local'), Buffer.of(0, 0)]);
    for (const packet of [none, two, twoOpts, trailing]) {
      const result = zone.resolve(packet, 'udp');
      expect(result).toMatchObject({ kind: 'reply', rcode: 'FORMERR' });
      if (result.kind === 'reply')
        expect(result.bytes.readUInt16BE(0)).toBe(packet.readUInt16BE(0));
    }
  });

  it('answers FORMERR for a compression pointer in the question', () => {
    const packet = query('a.svc.cluster.local');
    packet[12] = 0xc0;
    packet[13] = 0x04;
    // dns-packet accepts this pointer into the header (qdcount's high byte 0 reads as the
    // root name); we never read names from the header.
    expect(zone.resolve(packet.subarray(0, 12 + 2 + 4), 'udp')).toMatchObject({
      rcode: 'FORMERR',
    });
  });

  it('treats a label containing a dot as one label, never as two', () => {
    const name = Buffer.concat([
      Buffer.of(11),
      Buffer.from('web.default'),
      Buffer.of(3),
      Buffer.from('svc'),
      Buffer.of(7),
      Buffer.from('cluster'),
      Buffer.of(5),
      Buffer.from('local'),
      Buffer.of(0),
    ]);
    const packet = Buffer.concat([
      Buffer.from([0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0]),
      name,
      Buffer.from([0, 28, 0, 1]),
    ]);
    const raw = zone.answer(packet, 'udp')!;
    expect((dnsPacket.decode(raw) as Decoded).rcode).toBe('NXDOMAIN');
    expect(raw.subarray(12, 12 + name.length).equals(name)).toBe(true);
  });

  it('answers SERVFAIL in the zone before the first snapshot, REFUSED outside it', () => {
    const pending = DnsZone.pending();
    expect(pending.ready).toBe(false);
    expect(pending.resolve(query('web.default.svc.cluster.local'), 'udp')).toMatchObject({
      rcode: 'SERVFAIL',
    });
    expect(pending.resolve(query('.', { type: 'NS' }), 'udp')).toMatchObject({
      rcode: 'REFUSED',
    });
  });

  it('never throws on random and mutated packets', () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x80000000;
    };
    const seeds = [
      query('web.default.svc.cluster.local', { edns: {} }),
      query('svc.cluster.local', { type: 'ANY' }),
      query('.', { type: 'NS' }),
    ];
    const kinds = new Set<string>();
    for (let i = 0; i < 20_000; i++) {
      const base = seeds[i % seeds.length]!;
      let packet: Buffer;
      if (i % 4 === 0) {
        packet = Buffer.alloc(Math.floor(random() * 80));
        for (let j = 0; j < packet.length; j++) packet[j] = Math.floor(random() * 256);
      } else {
        packet = Buffer.from(base.subarray(0, Math.max(0, base.length - Math.floor(random() * 8))));
        for (let flips = 1 + Math.floor(random() * 3); flips > 0 && packet.length > 0; flips--) {
          const at = Math.floor(random() * packet.length);
          packet[at] = packet[at]! ^ (1 << Math.floor(random() * 8));
        }
      }
      const result = zone.resolve(packet, i % 2 === 0 ? 'udp' : 'tcp');
      kinds.add(result.kind === 'reply' ? result.rcode : result.reason);
    }
    expect(kinds).toContain('malformed');
    expect(kinds).toContain('NOERROR');
  });
});

describe('DnsZone.fastResolve', () => {
  /** Every way a packet reaches `resolve`: both transports, through the fast path or not. */
  function expectSameAsCompute(subject: DnsZone, packet: Buffer): boolean {
    let fast = false;
    for (const transport of ['udp', 'tcp'] as const) {
      const quick = subject.fastResolve(packet, transport);
      if (quick === undefined) continue;
      fast = true;
      expect({ packet: packet.toString('hex'), transport, reply: quick }).toEqual({
        packet: packet.toString('hex'),
        transport,
        reply: subject.compute(packet, transport),
      });
    }
    return fast;
  }

  it('answers common queries byte for byte as the decoding path, and leaves the rest to it', () => {
    let seed = 11;
    const random = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x80000000;
    };
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
    const names = [
      'web.default.svc.cluster.local',
      'database.product.svc.cluster.local',
      'web.product.svc.cluster.local',
      'default.svc.cluster.local',
      'empty.svc.cluster.local',
      'ns.svc.cluster.local',
      'svc.cluster.local',
      'a.web.default.svc.cluster.local',
      'web.default.default.svc.cluster.local',
      'api.example.com.default.svc.cluster.local',
      'example.com',
      'cluster.local',
      'svc.cluster.local.example',
      'web.default.svc.cluster.locaL.x',
      'wéb.default.svc.cluster.local',
      '\\.web.default.svc.cluster.local',
      `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(40)}.svc.cluster.local`,
    ];
    const types: QueryType[] = ['A', 'AAAA', 'ANY', 'SOA', 'NS', 'TXT', 'AXFR', 'IXFR', 'MX'];
    const classes: RecordClass[] = ['IN', 'ANY', 'CH', 'HS'];
    const zones = [zone, DnsZone.pending()];
    let fast = 0;
    let total = 0;
    for (let i = 0; i < 3_000; i++) {
      const name = [...pick(names)].map((c) => (random() < 0.5 ? c.toUpperCase() : c)).join('');
      // An option (PADDING, 8 bytes) leaves the query to the decoding path.
      const options: OptAnswer['options'] =
        random() < 0.8 ? [] : [{ code: 12, data: Buffer.alloc(8) }];
      const edns: Partial<OptAnswer> | false =
        random() < 0.5
          ? false
          : {
              udpPayloadSize: pick([0, 512, 900, 1232, 4096]),
              flags: random() < 0.5 ? dnsPacket.DNSSEC_OK : 0,
              ednsVersion: random() < 0.9 ? 0 : 1,
              extendedRcode: random() < 0.9 ? 0 : 1,
              options,
            };
      let packet = query(name, {
        id: Math.floor(random() * 0x10000),
        type: pick(types),
        klass: pick(classes),
        // Any header bit: QR, opcodes, AA, TC, RD, RA, Z, AD, CD.
        flags: random() < 0.7 ? pick([0, 0x100, 0x10, 0x110]) : Math.floor(random() * 0x8000),
        edns,
      });
      if (random() < 0.3) {
        packet = Buffer.from(packet.subarray(0, packet.length - Math.floor(random() * 3)));
        const at = Math.floor(random() * packet.length);
        packet[at] = packet[at]! ^ (1 << Math.floor(random() * 8));
      }
      if (random() < 0.05) packet = Buffer.concat([packet, Buffer.from([0])]);
      for (const subject of zones) {
        total++;
        if (expectSameAsCompute(subject, packet)) fast++;
      }
    }
    // Most of these are common queries: the fast path must really answer them.
    expect(fast / total).toBeGreaterThan(0.4);
    expect(fast).toBeLessThan(total);
  });

  it('reuses no body of another variant: RD, CD, EDNS and DO each keep their own', () => {
    const subject = DnsZone.build({
      cluster: 'podmin',
      generation: 1,
      services: [{ namespace: 'default', name: 'web' }],
    });
    for (const flags of [0, dnsPacket.RECURSION_DESIRED, dnsPacket.CHECKING_DISABLED]) {
      for (const edns of [false, {}, { flags: dnsPacket.DNSSEC_OK }] as const) {
        for (const name of ['web.default.svc.cluster.local', 'nope.default.svc.cluster.local']) {
          const packet = query(name, { flags, edns });
          expect(expectSameAsCompute(subject, packet)).toBe(true);
          expect(subject.resolve(packet, 'udp')).toEqual(subject.compute(packet, 'udp'));
        }
      }
    }
  });
});

describe('UDP size limit and truncation', () => {
  it('uses 512 without EDNS, the client size floored at 512 and capped at 1232 with it', () => {
    expect(udpReplyLimit(undefined)).toBe(512);
    expect(udpReplyLimit(100)).toBe(512);
    expect(udpReplyLimit(900)).toBe(900);
    expect(udpReplyLimit(4096)).toBe(1232);
  });

  it('sets TC and drops the answers when the reply exceeds the limit, keeping question and OPT', () => {
    // One AAAA per name never exceeds 512 bytes, so the path is driven with a large answer set.
    const answers: Answer[] = Array.from({ length: 40 }, (_, i) => ({
      type: 'AAAA',
      name: `web${i}.default.svc.cluster.local`,
      ttl: 5,
      data: WEB_VIP,
    }));
    const parts: ReplyParts = {
      id: 77,
      flags: dnsPacket.AUTHORITATIVE_ANSWER,
      rcode: 'NOERROR',
      answers,
      authorities: [],
      edns: { flagDo: false },
    };
    const packet = query('web.default.svc.cluster.local', { edns: {} });
    const question = packet.subarray(12, packet.length - 11);
    const small = encodeReply(parts, question, udpReplyLimit(512));
    expect(small).toMatchObject({ kind: 'reply', truncated: true });
    if (small.kind !== 'reply') throw new Error('dropped');
    expect(small.bytes.length).toBeLessThanOrEqual(512);
    const decoded = dnsPacket.decode(small.bytes) as Decoded;
    expect(decoded).toMatchObject({ id: 77, flag_tc: true, answers: [] });
    expect(decoded.questions?.[0]?.name).toBe('web.default.svc.cluster.local');
    expect(optOf(decoded)?.udpPayloadSize).toBe(1232);
    const full = encodeReply(parts, question, 65535);
    expect(full).toMatchObject({ kind: 'reply', truncated: false });
    if (full.kind !== 'reply') throw new Error('dropped');
    expect((dnsPacket.decode(full.bytes) as Decoded).answers).toHaveLength(40);
  });

  it('never truncates a real answer of this zone at 512 bytes, even for the longest names', () => {
    const long = DnsZone.build({
      cluster: 'c',
      generation: 1,
      services: [{ namespace: 'n'.repeat(63), name: 's'.repeat(63) }],
    });
    const result = long.resolve(
      query(`${'s'.repeat(63)}.${'n'.repeat(63)}.svc.cluster.local`),
      'udp',
    );
    expect(result).toMatchObject({ kind: 'reply', rcode: 'NOERROR', truncated: false });
  });
});

describe('DnsZone.build', () => {
  it('rejects invalid names, listing each', () => {
    let caught: unknown;
    try {
      DnsZone.build({
        cluster: 'c',
        generation: 1,
        services: [
          { namespace: 'Default', name: 'web' },
          { namespace: 'ok', name: 'a.b' },
          { namespace: 'ok', name: 'fine' },
        ],
      });
    } catch (err) {
      caught = err;
    }
    expect(hasCode(caught, 'INVALID_ARGUMENT')).toBe(true);
    expect(String(caught)).toContain('services[0]');
    expect(String(caught)).toContain('services[1]');
    expect(String(caught)).not.toContain('services[2]');
  });

  it('knows its size and VIPs', () => {
    expect(zone.size).toBe(2);
    expect(zone.vipOf('default', 'web')).toBe(WEB_VIP);
    expect(zone.vipOf('Default', 'WEB')).toBe(WEB_VIP);
    expect(zone.vipOf('default', 'nope')).toBeUndefined();
    expect(zone.generation).toBe(42);
  });

  it('reuses the records of a previous zone of the same cluster only', () => {
    const next = DnsZone.build(
      {
        cluster: 'podmin',
        generation: 43,
        services: [
          { namespace: 'default', name: 'web' },
          { namespace: 'default', name: 'api' },
        ],
      },
      zone,
    );
    expect(next.vipOf('default', 'web')).toBe(WEB_VIP);
    expect(next.vipOf('default', 'api')).toBe(serviceVip('podmin', 'default', 'api'));
    expect(next.vipOf('product', 'database')).toBeUndefined();
    const other = DnsZone.build(
      { cluster: 'other', generation: 1, services: [{ namespace: 'default', name: 'web' }] },
      zone,
    );
    expect(other.vipOf('default', 'web')).toBe(serviceVip('other', 'default', 'web'));
  });

  it('takes the SOA serial modulo 2^32', () => {
    const big = DnsZone.build({ cluster: 'c', generation: 2 ** 32 + 3, services: [] });
    const reply = dnsPacket.decode(big.answer(query('x.svc.cluster.local'), 'udp')!) as Decoded;
    expect(soaOf(reply).data.serial).toBe(3);
  });
});

describe('DnsZone.view and fromView', () => {
  it('round-trips through a structured clone and answers byte for byte as the original', () => {
    const copy = DnsZone.fromView(structuredClone(zone.view()));
    expect(copy.size).toBe(zone.size);
    expect(copy.generation).toBe(42);
    expect(copy.vipOf('default', 'web')).toBe(WEB_VIP);
    const packets = [
      query('web.default.svc.cluster.local'),
      query('WEB.Default.svc.cluster.local', { type: 'ANY', edns: { flag_do: true } }),
      query('database.product.svc.cluster.local', { type: 'A' }),
      query('product.svc.cluster.local'),
      query('nope.product.svc.cluster.local'),
      query('svc.cluster.local', { type: 'SOA' }),
      query('example.com'),
      query('web.default.svc.cluster.local', { edns: { ednsVersion: 1 } }),
    ];
    for (const packet of packets) {
      for (const transport of ['udp', 'tcp'] as const) {
        expect(copy.resolve(packet, transport)).toEqual(zone.resolve(packet, transport));
      }
    }
  });

  it('keeps a pending zone pending (SERVFAIL in the zone)', () => {
    const copy = DnsZone.fromView(DnsZone.pending().view());
    expect(copy.ready).toBe(false);
    const reply = copy.answer(query('web.default.svc.cluster.local'), 'udp');
    expect((dnsPacket.decode(reply ?? Buffer.alloc(0)) as Decoded).rcode).toBe('SERVFAIL');
  });
});
