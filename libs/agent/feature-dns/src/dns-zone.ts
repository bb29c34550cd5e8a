import type { Answer } from 'dns-packet';
import { encodeParts, encodeReply, udpReplyLimit, type ReplyParts } from './dns-reply-encoding';
import { parseQuery } from './dns-query-parsing';
import {
  AA,
  CD,
  CLASS_ANY,
  CLASS_IN,
  KEY_SCRATCH,
  LABEL_STARTS,
  RD,
  TCP_LIMIT,
  TYPE_AAAA,
  TYPE_ANY,
  TYPE_AXFR,
  TYPE_IXFR,
  TYPE_NS,
  TYPE_OPT,
  TYPE_SOA,
  ZONE_LABELS,
  labelIs,
  lowerLabel,
  spliceQuestion,
  type RawQuestion,
} from './dns-wire';
import {
  DNS_CLASSIC_UDP_PAYLOAD,
  DNS_ZONE_APEX,
  DNS_ZONE_NS,
  type DnsRcodeName,
  type DnsResult,
  type DnsTransport,
  type ZoneSnapshot,
  type ZoneView,
} from './dns-zone-types';
import {
  BODY_VARIANTS,
  snapshotNames,
  viewNames,
  zoneNs,
  zoneSoa,
  type BodySlots,
  type ZoneNames,
  type ZoneRecord,
} from './zone-records';

/** A reply kept for reuse; its bytes are never mutated (hits copy them). */
type MemoReply = Extract<DnsResult, { kind: 'reply' }>;

/** The reply kinds `fastResolve` answers, apart from a Service's AAAA. */
type FixedKind = 'refused' | 'servfail' | 'nodata' | 'nxdomain';

const FAST_RCODE: Readonly<Record<FixedKind | 'aaaa', DnsRcodeName>> = {
  refused: 'REFUSED',
  servfail: 'SERVFAIL',
  nodata: 'NOERROR',
  nxdomain: 'NXDOMAIN',
  aaaa: 'NOERROR',
};

/** Encoded reply bodies kept by `compute`, at most. */
const MAX_CACHED_BODIES = 50_000;
/** Memoized replies per transport; past this the memo starts over, so junk cannot pin memory. */
const MAX_MEMO_REPLIES = 20_000;
/** Longer queries (many options, padding) are answered without the memo. */
const MAX_MEMO_QUERY = 512;

/** A reply classified by `classify`, with a key naming it apart from ID, question and flags. */
type ClassifiedReply = ReplyParts & { cacheKey: string };

/**
 * The authoritative data of `svc.cluster.local` for one snapshot, immutable, and the answering
 * logic over it: AAAA (and AAAA for ANY) with TTL 5 per Service, NODATA with the SOA for other
 * types of an existing name (a Service, a namespace that has one — an empty non-terminal —, the
 * apex, the NS host), NXDOMAIN with the SOA for everything else in the zone, REFUSED outside it
 * (`. NS`, CoreDNS's health probe, included: REFUSED is an answer, and it is never dropped).
 * Packets that are not queries (QR=1) or do not parse are dropped; a parsed header with zero or
 * several questions, several OPT records or trailing bytes gets FORMERR, an opcode other than
 * QUERY NOTIMP, EDNS version above 0 BADVERS (dns-query-parsing.ts).
 */
export class DnsZone {
  /** A zone before the first snapshot: SERVFAIL in the zone, so nothing negative gets cached. */
  static pending(): DnsZone {
    return new DnsZone('', 0, { records: new Map(), namespaces: new Set() }, false);
  }

  /**
   * Builds the zone for a snapshot; throws a ValidationError naming every invalid Service.
   * Records of `previous` (same cluster) are reused, so a new snapshot costs no hashing for
   * unchanged Services and does not stall answering.
   */
  static build(snapshot: ZoneSnapshot, previous?: DnsZone): DnsZone {
    const reusable = previous?.cluster === snapshot.cluster ? previous.records : undefined;
    const names = snapshotNames(snapshot, reusable);
    return new DnsZone(snapshot.cluster, snapshot.generation, names, true);
  }

  /** The zone rebuilt from `view()` output: answers byte for byte as the zone it came from. */
  static fromView(view: ZoneView): DnsZone {
    return new DnsZone(view.cluster, view.generation, viewNames(view), view.ready);
  }

  private readonly records: ReadonlyMap<string, ZoneRecord>;
  private readonly namespaces: ReadonlySet<string>;
  private readonly soa: Answer;
  private readonly ns: Answer = zoneNs();
  /** Encoded replies without question (ID 0), per reply kind and flags; bounded. */
  private readonly bodies = new Map<string, Buffer>();
  /**
   * Replies by query bytes after the ID, per transport, for the queries `fastResolve` leaves to
   * `compute` (EDNS options, truncation, the apex, odd headers): the reply is a function of those
   * bytes and the transport alone, apart from the ID copied into its first two bytes, so a
   * repeated one skips decoding and encoding entirely.
   */
  private readonly memo = { udp: new Map<string, MemoReply>(), tcp: new Map<string, MemoReply>() };
  /** `fastResolve`'s encoded replies of each kind but a Service's AAAA (which its record keeps). */
  private readonly fixedBodies: Record<FixedKind, BodySlots> = {
    refused: new Array<Buffer | undefined>(BODY_VARIANTS),
    servfail: new Array<Buffer | undefined>(BODY_VARIANTS),
    nodata: new Array<Buffer | undefined>(BODY_VARIANTS),
    nxdomain: new Array<Buffer | undefined>(BODY_VARIANTS),
  };

  private constructor(
    /** The cluster whose VIPs this zone serves ('' while pending). */
    readonly cluster: string,
    /** The snapshot generation (the SOA serial modulo 2^32). */
    readonly generation: number,
    names: ZoneNames,
    /** False for the pending zone. */
    readonly ready: boolean,
  ) {
    this.records = names.records;
    this.namespaces = names.namespaces;
    this.soa = zoneSoa(generation);
  }

  /** Number of Service names. */
  get size(): number {
    return this.records.size;
  }

  /** The VIP served for `<name>.<namespace>.svc.cluster.local`, if any (case-insensitive). */
  vipOf(namespace: string, name: string): string | undefined {
    return this.records.get(`${name}.${namespace}`.toLowerCase())?.answer.data;
  }

  /** This zone as plain data for `DnsZone.fromView` (in another thread). */
  view(): ZoneView {
    const records: [string, string][] = [];
    for (const [key, record] of this.records) records.push([key, record.answer.data]);
    return { cluster: this.cluster, generation: this.generation, ready: this.ready, records };
  }

  /** The reply bytes for one query packet, or undefined when it is dropped. */
  answer(query: Buffer, transport: DnsTransport): Buffer | undefined {
    const result = this.resolve(query, transport);
    return result.kind === 'reply' ? result.bytes : undefined;
  }

  /** The reply to one query packet with its rcode, or why it is dropped; never throws. */
  resolve(query: Buffer, transport: DnsTransport): DnsResult {
    const fast = this.fastResolve(query, transport);
    if (fast !== undefined) return fast;
    if (query.length < 12 || query.length > MAX_MEMO_QUERY) return this.compute(query, transport);
    const memo = this.memo[transport];
    // latin1 maps every byte to one character: equal keys are equal bytes.
    const key = query.toString('latin1', 2);
    const known = memo.get(key);
    if (known !== undefined) {
      const bytes = Buffer.allocUnsafe(known.bytes.length);
      known.bytes.copy(bytes);
      bytes[0] = query[0] ?? 0;
      bytes[1] = query[1] ?? 0;
      return { kind: 'reply', bytes, rcode: known.rcode, truncated: known.truncated };
    }
    const result = this.compute(query, transport);
    // Drops are not kept: random junk would only evict the names clients really ask for.
    if (result.kind === 'reply') {
      if (memo.size >= MAX_MEMO_REPLIES) memo.clear();
      memo.set(key, result);
    }
    return result;
  }

  /**
   * `resolve` without the fast path and the memo: decodes with dns-packet, classifies and
   * encodes. The reference `fastResolve` is tested against.
   */
  compute(query: Buffer, transport: DnsTransport): DnsResult {
    const parsed = parseQuery(query, transport);
    if (parsed.kind !== 'query') return parsed;
    const { question, parts, limit } = parsed;
    const reply = this.classify(question, parts);
    // Replies differ only in ID and question: reuse the encoded rest (dns-packet's bytes).
    const key = `${reply.cacheKey}|${reply.flags}|${parts.edns ? Number(parts.edns.flagDo) : 2}`;
    const body = this.bodies.get(key);
    if (body !== undefined && body.length + question.bytes.length <= limit) {
      const bytes = spliceQuestion(body, question.bytes);
      bytes.writeUInt16BE(parts.id, 0);
      return { kind: 'reply', bytes, rcode: reply.rcode, truncated: false };
    }
    const result = encodeReply(reply, question.bytes, limit);
    if (body === undefined && this.bodies.size < MAX_CACHED_BODIES) {
      this.bodies.set(key, encodeParts(reply, reply.answers, reply.authorities, 0));
    }
    return result;
  }

  /** The reply for a question, with a key naming it apart from ID, question and flags. */
  private classify(q: RawQuestion, parts: ReplyParts): ClassifiedReply {
    const { labels } = q;
    const n = labels.length;
    const inZone =
      n >= 3 && labels[n - 1] === 'local' && labels[n - 2] === 'cluster' && labels[n - 3] === 'svc';
    const supportedClass = q.qclass === CLASS_IN || q.qclass === CLASS_ANY;
    if (!inZone || !supportedClass) return { ...parts, rcode: 'REFUSED', cacheKey: 'refused' };
    if (!this.ready) return { ...parts, rcode: 'SERVFAIL', cacheKey: 'servfail' };
    if (q.qtype === TYPE_AXFR || q.qtype === TYPE_IXFR) {
      return { ...parts, rcode: 'REFUSED', cacheKey: 'refused' };
    }
    const authoritative = { ...parts, flags: parts.flags | AA };
    const nodata = { ...authoritative, authorities: [this.soa], cacheKey: 'nodata' };
    const depth = n - 3;
    if (depth === 0) {
      const answers: Answer[] = [];
      if (q.qtype === TYPE_SOA || q.qtype === TYPE_ANY) answers.push(this.soa);
      if (q.qtype === TYPE_NS || q.qtype === TYPE_ANY) answers.push(this.ns);
      return answers.length > 0
        ? { ...authoritative, answers, cacheKey: `apex:${q.qtype}` }
        : nodata;
    }
    if (depth === 1) {
      const label = labels[0] ?? '';
      const exists = this.namespaces.has(label) || `${label}.${DNS_ZONE_APEX}` === DNS_ZONE_NS;
      return exists ? nodata : { ...nodata, rcode: 'NXDOMAIN', cacheKey: 'nxdomain' };
    }
    const record = depth === 2 ? this.records.get(`${labels[0]}.${labels[1]}`) : undefined;
    if (record === undefined) return { ...nodata, rcode: 'NXDOMAIN', cacheKey: 'nxdomain' };
    if (q.qtype === TYPE_AAAA || q.qtype === TYPE_ANY) {
      return { ...authoritative, answers: [record.answer], cacheKey: `aaaa:${record.answer.name}` };
    }
    return nodata;
  }

  /**
   * The reply to the common query — opcode QUERY, one question without compression, nothing
   * else but an OPT of version 0 without options — read straight from its bytes and spliced
   * onto a body encoded once per kind of reply; undefined for anything else (and for the apex
   * and truncation), which `compute` answers. Hand-written because dns-packet's decode builds
   * objects for the header, every label and record: with the reply memo missed (case varied,
   * many distinct names) that was most of the cost of a query. It answers byte for byte as
   * `compute` does (dns-zone.spec.ts compares both over generated and mutated packets).
   */
  fastResolve(query: Buffer, transport: DnsTransport): DnsResult | undefined {
    const length = query.length;
    // QR clear, opcode QUERY; QDCOUNT 1, ANCOUNT 0, NSCOUNT 0, ARCOUNT 0 or 1.
    if (length < 17 || ((query[2] ?? 0) & 0xf8) !== 0) return undefined;
    if (query[4] !== 0 || query[5] !== 1 || query[6] !== 0 || query[7] !== 0) return undefined;
    if (query[8] !== 0 || query[9] !== 0 || query[10] !== 0 || (query[11] ?? 0) > 1) {
      return undefined;
    }
    let offset = 12;
    let labels = 0;
    for (;;) {
      const size = query[offset];
      if (size === undefined || (size & 0xc0) !== 0) return undefined;
      if (size === 0) break;
      LABEL_STARTS[labels++] = offset;
      offset += 1 + size;
      // dns-packet refuses names over 254 bytes of labels: compute drops those.
      if (offset - 12 > 254) return undefined;
    }
    const questionEnd = offset + 5;
    if (questionEnd > length) return undefined;
    const qtype = ((query[offset + 1] ?? 0) << 8) | (query[offset + 2] ?? 0);
    const qclass = ((query[offset + 3] ?? 0) << 8) | (query[offset + 4] ?? 0);
    let edns = 0;
    let limit = transport === 'tcp' ? TCP_LIMIT : DNS_CLASSIC_UDP_PAYLOAD;
    if (query[11] === 1) {
      // OPT: root name, type, UDP size, extended rcode, version, flags, RDLENGTH 0.
      const o = questionEnd;
      if (length !== o + 11 || query[o] !== 0 || query[o + 1] !== 0) return undefined;
      if (query[o + 2] !== TYPE_OPT || query[o + 6] !== 0) return undefined;
      if (query[o + 9] !== 0 || query[o + 10] !== 0) return undefined;
      edns = ((query[o + 7] ?? 0) & 0x80) !== 0 ? 2 : 1;
      if (transport === 'udp') {
        limit = udpReplyLimit(((query[o + 3] ?? 0) << 8) | (query[o + 4] ?? 0));
      }
    } else if (length !== questionEnd) {
      return undefined;
    }
    const flags = (query[2] ?? 0) << 8;
    const variant = ((flags & RD) !== 0 ? 1 : 0) | ((query[3] ?? 0) & CD ? 2 : 0) | (edns << 2);
    let kind: FixedKind | undefined;
    let record: ZoneRecord | undefined;
    const inZone =
      labels >= 3 &&
      labelIs(query, LABEL_STARTS[labels - 3] ?? 0, ZONE_LABELS[0] as Buffer) &&
      labelIs(query, LABEL_STARTS[labels - 2] ?? 0, ZONE_LABELS[1] as Buffer) &&
      labelIs(query, LABEL_STARTS[labels - 1] ?? 0, ZONE_LABELS[2] as Buffer);
    const depth = labels - 3;
    if (!inZone || (qclass !== CLASS_IN && qclass !== CLASS_ANY)) kind = 'refused';
    else if (!this.ready) kind = 'servfail';
    else if (qtype === TYPE_AXFR || qtype === TYPE_IXFR) kind = 'refused';
    else if (depth === 0) return undefined;
    else if (depth === 1) {
      const end = lowerLabel(query, 12, 0);
      if (end < 0) return undefined;
      const label = KEY_SCRATCH.toString('latin1', 0, end);
      kind = this.namespaces.has(label) || label === 'ns' ? 'nodata' : 'nxdomain';
    } else if (depth === 2) {
      const second = LABEL_STARTS[1] ?? 0;
      let end = lowerLabel(query, 12, 0);
      if (end < 0) return undefined;
      KEY_SCRATCH[end] = 0x2e;
      end = lowerLabel(query, second, end + 1);
      if (end < 0) return undefined;
      record = this.records.get(KEY_SCRATCH.toString('latin1', 0, end));
      if (record === undefined) kind = 'nxdomain';
      else if (qtype !== TYPE_AAAA && qtype !== TYPE_ANY) kind = 'nodata';
    } else kind = 'nxdomain';
    const slots = kind === undefined ? (record as ZoneRecord).bodies : this.fixedBodies[kind];
    const body = slots[variant] ?? this.fastBody(slots, variant, kind, record);
    if (body.length + questionEnd - 12 > limit) return undefined;
    const bytes = spliceQuestion(body, query.subarray(12, questionEnd));
    bytes[0] = query[0] ?? 0;
    bytes[1] = query[1] ?? 0;
    return { kind: 'reply', bytes, rcode: FAST_RCODE[kind ?? 'aaaa'], truncated: false };
  }

  /** Encodes a `fastResolve` body as `compute` would (ID 0, no question) and keeps it. */
  private fastBody(
    slots: BodySlots,
    variant: number,
    kind: FixedKind | undefined,
    record: ZoneRecord | undefined,
  ): Buffer {
    const ednsState = variant >> 2;
    const parts: ReplyParts = {
      id: 0,
      flags: (variant & 1 ? RD : 0) | (variant & 2 ? CD : 0),
      rcode: FAST_RCODE[kind ?? 'aaaa'],
      answers: kind === undefined && record !== undefined ? [record.answer] : [],
      authorities: kind === 'nodata' || kind === 'nxdomain' ? [this.soa] : [],
      edns: ednsState === 0 ? undefined : { flagDo: ednsState === 2 },
    };
    if (kind !== 'refused' && kind !== 'servfail') parts.flags |= AA;
    const body = encodeParts(parts, parts.answers, parts.authorities, 0);
    slots[variant] = body;
    return body;
  }
}
