import * as dnsPacket from 'dns-packet';
import type { Answer, StringAnswer } from 'dns-packet';
import { ValidationError, type FieldProblem } from '@podmin/util-errors';
import { serviceVip } from '@podmin/util-desired-state';
import { isDns1123Label } from '@podmin/util-manifest';
// TTL of every record and the SOA minimum (negative TTL): one constant, from which podmin-agent's
// shutdown derives its DNS TTL margin too.
import { DNS_TTL_SECONDS } from '@podmin/agent-util-config';

/** The zone the agent is authoritative for. */
export const DNS_ZONE_APEX = 'svc.cluster.local';
/** The EDNS(0) UDP payload size this server advertises and caps clients at (DNS flag day 2020). */
export const DNS_SERVER_UDP_PAYLOAD = 1232;
/** The UDP limit without EDNS, and the floor of an advertised size (RFC 6891 §6.2.5). */
export const DNS_CLASSIC_UDP_PAYLOAD = 512;
/** Name server of the zone, also its SOA MNAME; it has no address records (NODATA). */
export const DNS_ZONE_NS = `ns.${DNS_ZONE_APEX}`;
/** SOA RNAME of the zone (`hostmaster@svc.cluster.local`). */
export const DNS_ZONE_HOSTMASTER = `hostmaster.${DNS_ZONE_APEX}`;

/** How a query arrived; it decides the size limit of the reply. */
export type DnsTransport = 'udp' | 'tcp';

/** One Service identity of the snapshot. */
export interface ZoneService {
  namespace: string;
  name: string;
}

/** What a zone is built from: the snapshot's cluster-wide Service identities. */
export interface ZoneSnapshot {
  cluster: string;
  /** Snapshot generation; becomes the SOA serial (mod 2^32). */
  generation: number;
  services: readonly ZoneService[];
}

/**
 * A zone as plain data (structured-clonable), to hand to a worker thread: the records as
 * `[<name>.<namespace>, VIP]` pairs, already hashed, so rebuilding it costs no SHA-512.
 */
export interface ZoneView {
  cluster: string;
  generation: number;
  ready: boolean;
  records: [key: string, vip: string][];
}

/** Response codes this server sends (BADVERS is the EDNS extended code 16). */
export type DnsRcodeName =
  'NOERROR' | 'FORMERR' | 'SERVFAIL' | 'NXDOMAIN' | 'NOTIMP' | 'REFUSED' | 'BADVERS';

/** The outcome of one packet: a reply to send, or a reason it is dropped silently. */
export type DnsResult =
  | { kind: 'reply'; bytes: Buffer; rcode: DnsRcodeName; truncated: boolean }
  | { kind: 'drop'; reason: 'malformed' | 'response' };

/** The sections and flags of a reply before encoding (exported for the truncation tests). */
export interface ReplyParts {
  id: number;
  /** Header bits below QR: opcode, AA, RD, CD; rcode and TC are added on encoding. */
  flags: number;
  rcode: DnsRcodeName;
  answers: Answer[];
  authorities: Answer[];
  /** The query's OPT, when it had one: the reply then carries an OPT too. */
  edns: { flagDo: boolean } | undefined;
}

const RCODE_VALUE: Readonly<Record<DnsRcodeName, number>> = {
  NOERROR: 0,
  FORMERR: 1,
  SERVFAIL: 2,
  NXDOMAIN: 3,
  NOTIMP: 4,
  REFUSED: 5,
  BADVERS: 16,
};
const QR = 0x8000;
const AA = dnsPacket.AUTHORITATIVE_ANSWER;
const TC = dnsPacket.TRUNCATED_RESPONSE;
const COPIED_FLAGS = dnsPacket.RECURSION_DESIRED | dnsPacket.CHECKING_DISABLED;
const RD = dnsPacket.RECURSION_DESIRED;
const CD = dnsPacket.CHECKING_DISABLED;
const TYPE_NS = 2;
const TYPE_SOA = 6;
const TYPE_AAAA = 28;
const TYPE_IXFR = 251;
const TYPE_AXFR = 252;
const TYPE_OPT = 41;
const TYPE_ANY = 255;
const CLASS_IN = 1;
const CLASS_ANY = 255;
const TCP_LIMIT = 65535;
const NO_QUESTION = Buffer.alloc(0);
const MAX_CACHED_BODIES = 50_000;
/** Memoized replies per transport; past this the memo starts over, so junk cannot pin memory. */
const MAX_MEMO_REPLIES = 20_000;
/** Longer queries (many options, padding) are answered without the memo. */
const MAX_MEMO_QUERY = 512;

/** A reply kept for reuse; its bytes are never mutated (hits copy them). */
type MemoReply = Extract<DnsResult, { kind: 'reply' }>;

/**
 * Replies without question of one kind, by the query's RD and CD bits and EDNS (none, DO clear,
 * DO set): `variant = RD | CD << 1 | edns << 2`. Built on first use; never mutated.
 */
type BodySlots = (Buffer | undefined)[];
const BODY_VARIANTS = 12;

/** A Service name's AAAA record and its encoded positive replies (zone-independent: reused). */
interface ZoneRecord {
  answer: StringAnswer;
  bodies: BodySlots;
}

/** The reply kinds `fastResolve` answers, apart from a Service's AAAA. */
type FixedKind = 'refused' | 'servfail' | 'nodata' | 'nxdomain';

const FAST_RCODE: Readonly<Record<FixedKind | 'aaaa', DnsRcodeName>> = {
  refused: 'REFUSED',
  servfail: 'SERVFAIL',
  nodata: 'NOERROR',
  nxdomain: 'NXDOMAIN',
  aaaa: 'NOERROR',
};

/** A name has at most 127 labels (254 bytes); the fast path's scratch holds their offsets. */
const LABEL_STARTS = new Int32Array(128);
/** Scratch for a lowercased `<name>.<namespace>` key (two labels of at most 63 bytes). */
const KEY_SCRATCH = Buffer.alloc(128);
const ZONE_LABELS = ['svc', 'cluster', 'local'].map((label) => Buffer.from(label, 'latin1'));

/**
 * Encodes a reply with dns-packet, putting the query's own question bytes in it so the ID,
 * the 0x20 letter case and any odd label bytes come back exactly as asked; over `limit` bytes
 * it sends TC=1 with the question and OPT only (RFC 2181 §9), so the client retries over TCP.
 */
export function encodeReply(parts: ReplyParts, question: Buffer, limit: number): DnsResult {
  const full = spliceQuestion(encodeParts(parts, parts.answers, parts.authorities, 0), question);
  if (full.length <= limit) {
    return { kind: 'reply', bytes: full, rcode: parts.rcode, truncated: false };
  }
  const bytes = spliceQuestion(encodeParts(parts, [], [], TC), question);
  return { kind: 'reply', bytes, rcode: parts.rcode, truncated: true };
}

function encodeParts(parts: ReplyParts, answers: Answer[], authorities: Answer[], extra: number) {
  const rcode = RCODE_VALUE[parts.rcode];
  const additionals: Answer[] = parts.edns
    ? [
        {
          type: 'OPT',
          name: '.',
          udpPayloadSize: DNS_SERVER_UDP_PAYLOAD,
          extendedRcode: rcode >> 4,
          ednsVersion: 0,
          flags: parts.edns.flagDo ? dnsPacket.DNSSEC_OK : 0,
          flag_do: parts.edns.flagDo,
          options: [],
        },
      ]
    : [];
  return dnsPacket.encode({
    id: parts.id,
    type: 'response',
    flags: parts.flags | extra | (rcode & 0xf),
    questions: [],
    answers,
    authorities,
    additionals,
  });
}

function spliceQuestion(body: Buffer, question: Buffer): Buffer {
  if (question.length === 0) return body;
  const out = Buffer.allocUnsafe(body.length + question.length);
  body.copy(out, 0, 0, 12);
  out.writeUInt16BE(1, 4);
  question.copy(out, 12);
  body.copy(out, 12 + question.length, 12);
  return out;
}

/** The UDP reply limit: 512 without EDNS, else the client's size floored at 512, capped at ours. */
export function udpReplyLimit(clientPayload: number | undefined): number {
  if (clientPayload === undefined) return DNS_CLASSIC_UDP_PAYLOAD;
  return Math.min(DNS_SERVER_UDP_PAYLOAD, Math.max(DNS_CLASSIC_UDP_PAYLOAD, clientPayload));
}

/** The first question read from raw bytes: lowercased labels, type, class and its byte range. */
interface RawQuestion {
  labels: string[];
  qtype: number;
  qclass: number;
  bytes: Buffer;
}

/**
 * Reads the first question's labels straight from the packet (dns-packet has validated it
 * already but exposes neither section offsets nor the raw label bytes, and joins labels with
 * dots, so a label containing a dot would be mistaken for two). Only ASCII letters fold:
 * latin1 keeps one character per byte, and no folded non-ASCII byte can become ASCII.
 * Returns undefined for a compression pointer, which in the first question could only
 * point into the header.
 */
function readQuestion(query: Buffer): RawQuestion | undefined {
  const labels: string[] = [];
  let offset = 12;
  for (;;) {
    const length = query[offset];
    if (length === undefined || (length & 0xc0) !== 0) return undefined;
    if (length === 0) break;
    labels.push(query.toString('latin1', offset + 1, offset + 1 + length).toLowerCase());
    offset += 1 + length;
  }
  offset += 1;
  if (offset + 4 > query.length) return undefined;
  return {
    labels,
    qtype: query.readUInt16BE(offset),
    qclass: query.readUInt16BE(offset + 2),
    bytes: query.subarray(12, offset + 4),
  };
}

/** The AAAA record of Service key `<name>.<namespace>`. */
function aaaa(key: string, vip: string): ZoneRecord {
  return {
    answer: { type: 'AAAA', name: `${key}.${DNS_ZONE_APEX}`, ttl: DNS_TTL_SECONDS, data: vip },
    bodies: new Array<Buffer | undefined>(BODY_VARIANTS),
  };
}

/** True when the label at `start` of `query` is `label` (lowercase ASCII), in any letter case. */
function labelIs(query: Buffer, start: number, label: Buffer): boolean {
  if (query[start] !== label.length) return false;
  for (let i = 0; i < label.length; i++) {
    // Only an ASCII letter's two cases OR to a lowercase letter with 0x20.
    if (((query[start + 1 + i] ?? 0) | 0x20) !== label[i]) return false;
  }
  return true;
}

/**
 * Writes the label at `start` lowercased into KEY_SCRATCH at `at`; returns the end, or -1 for
 * a byte outside ASCII (which no Service name holds: `compute` decides those).
 */
function lowerLabel(query: Buffer, start: number, at: number): number {
  const length = query[start] ?? 0;
  for (let i = 0; i < length; i++) {
    const byte = query[start + 1 + i] ?? 0;
    if (byte >= 0x80) return -1;
    KEY_SCRATCH[at + i] = byte >= 0x41 && byte <= 0x5a ? byte | 0x20 : byte;
  }
  return at + length;
}

/**
 * The authoritative data of `svc.cluster.local` for one snapshot, immutable, and the answering
 * logic over it: AAAA (and AAAA for ANY) with TTL 5 per Service, NODATA with the SOA for other
 * types of an existing name (a Service, a namespace that has one — an empty non-terminal —, the
 * apex, the NS host), NXDOMAIN with the SOA for everything else in the zone, REFUSED outside it
 * (`. NS`, CoreDNS's health probe, included: REFUSED is an answer, and it is never dropped).
 * Packets that are not queries (QR=1) or do not parse are dropped; a parsed header with zero or
 * several questions, several OPT records or trailing bytes gets FORMERR, an opcode other than
 * QUERY NOTIMP, EDNS version above 0 BADVERS.
 */
export class DnsZone {
  /** A zone before the first snapshot: SERVFAIL in the zone, so nothing negative gets cached. */
  static pending(): DnsZone {
    return new DnsZone('', 0, new Map(), new Set(), false);
  }

  /**
   * Builds the zone for a snapshot; throws a ValidationError naming every invalid Service.
   * Records of `previous` (same cluster) are reused, so a new snapshot costs no hashing for
   * unchanged Services and does not stall answering.
   */
  static build(snapshot: ZoneSnapshot, previous?: DnsZone): DnsZone {
    const reusable = previous?.cluster === snapshot.cluster ? previous.records : undefined;
    const problems: FieldProblem[] = [];
    if (snapshot.cluster.length === 0) {
      problems.push({ field: 'cluster', message: 'must not be empty' });
    }
    if (!Number.isSafeInteger(snapshot.generation) || snapshot.generation < 0) {
      problems.push({ field: 'generation', message: 'must be a non-negative integer' });
    }
    const records = new Map<string, ZoneRecord>();
    const namespaces = new Set<string>();
    snapshot.services.forEach((service, i) => {
      const bad = [service.namespace, service.name].filter((label) => !isDns1123Label(label));
      if (bad.length > 0) {
        problems.push({
          field: `services[${i}]`,
          message: `${JSON.stringify(bad)} is not a DNS-1123 label`,
        });
        return;
      }
      const name = `${service.name}.${service.namespace}`;
      const known = reusable?.get(name);
      if (known !== undefined) {
        records.set(name, known);
        namespaces.add(service.namespace);
        return;
      }
      records.set(name, aaaa(name, serviceVip(snapshot.cluster, service.namespace, service.name)));
      namespaces.add(service.namespace);
    });
    if (problems.length > 0) {
      throw new ValidationError('building the Service DNS zone', problems, {
        code: 'INVALID_ARGUMENT',
        fault: 'system',
      });
    }
    return new DnsZone(snapshot.cluster, snapshot.generation, records, namespaces, true);
  }

  /** The zone rebuilt from `view()` output: answers byte for byte as the zone it came from. */
  static fromView(view: ZoneView): DnsZone {
    const records = new Map<string, ZoneRecord>();
    const namespaces = new Set<string>();
    for (const [key, vip] of view.records) {
      records.set(key, aaaa(key, vip));
      // Both labels are DNS-1123 (checked by build), so the first dot separates them.
      namespaces.add(key.slice(key.indexOf('.') + 1));
    }
    return new DnsZone(view.cluster, view.generation, records, namespaces, view.ready);
  }

  private readonly soa: Answer;
  /** Encoded replies without question (ID 0), per reply kind and flags; bounded. */
  private readonly bodies = new Map<string, Buffer>();
  private readonly ns: Answer;
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
    private readonly records: ReadonlyMap<string, ZoneRecord>,
    private readonly namespaces: ReadonlySet<string>,
    /** False for the pending zone. */
    readonly ready: boolean,
  ) {
    this.soa = {
      type: 'SOA',
      name: DNS_ZONE_APEX,
      ttl: DNS_TTL_SECONDS,
      data: {
        mname: DNS_ZONE_NS,
        rname: DNS_ZONE_HOSTMASTER,
        serial: generation % 2 ** 32,
        refresh: 3600,
        retry: 600,
        expire: 86400,
        minimum: DNS_TTL_SECONDS,
      },
    };
    this.ns = { type: 'NS', name: DNS_ZONE_APEX, ttl: DNS_TTL_SECONDS, data: DNS_ZONE_NS };
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
    if (query.length < 12) return { kind: 'drop', reason: 'malformed' };
    const header = query.readUInt16BE(2);
    // Never answer a response: two servers could otherwise bounce packets forever.
    if ((header & QR) !== 0) return { kind: 'drop', reason: 'response' };
    let packet: dnsPacket.DecodedPacket;
    try {
      packet = dnsPacket.decode(query);
    } catch {
      return { kind: 'drop', reason: 'malformed' };
    }
    const trailing = dnsPacket.decode.bytes !== query.length;
    const parts: ReplyParts = {
      id: query.readUInt16BE(0),
      flags: (header & 0x7800) | (header & COPIED_FLAGS),
      rcode: 'NOERROR',
      answers: [],
      authorities: [],
      edns: undefined,
    };
    const opts = (packet.additionals ?? []).filter((a) => a.type === 'OPT');
    const [opt] = opts;
    if (opts.length > 1 || (opt !== undefined && opt.name !== '.')) {
      return encodeReply({ ...parts, rcode: 'FORMERR' }, NO_QUESTION, DNS_CLASSIC_UDP_PAYLOAD);
    }
    if (opt !== undefined) parts.edns = { flagDo: opt.flag_do };
    const limit =
      transport === 'tcp' ? TCP_LIMIT : udpReplyLimit(opt ? opt.udpPayloadSize : undefined);
    const question = packet.questions?.length === 1 ? readQuestion(query) : undefined;
    // Other opcodes (NOTIFY, UPDATE, …) give their sections other meanings: NOTIMP first.
    if ((header & 0x7800) !== 0) {
      return encodeReply({ ...parts, rcode: 'NOTIMP' }, question?.bytes ?? NO_QUESTION, limit);
    }
    if (question === undefined || trailing) {
      return encodeReply({ ...parts, rcode: 'FORMERR' }, NO_QUESTION, limit);
    }
    if (opt !== undefined && opt.ednsVersion > 0) {
      return encodeReply({ ...parts, rcode: 'BADVERS' }, question.bytes, limit);
    }
    const reply = this.lookup(question, parts);
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

  private lookup(q: RawQuestion, parts: ReplyParts): ReplyParts & { cacheKey: string } {
    const { cacheKey, ...reply } = this.classify(q, parts);
    return { ...reply, cacheKey };
  }

  /** The reply for a question, with a key naming it apart from ID, question and flags. */
  private classify(q: RawQuestion, parts: ReplyParts): ReplyParts & { cacheKey: string } {
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
