import * as dnsPacket from 'dns-packet';
import { encodeReply, udpReplyLimit, type ReplyParts } from './dns-reply-encoding';
import {
  COPIED_FLAGS,
  NO_QUESTION,
  OPCODE_MASK,
  QR,
  TCP_LIMIT,
  readQuestion,
  type RawQuestion,
} from './dns-wire';
import { DNS_CLASSIC_UDP_PAYLOAD, type DnsResult, type DnsTransport } from './dns-zone-types';

/** A query the zone answers: its question, the reply's header so far and its size limit. */
export interface ParsedQuery {
  kind: 'query';
  question: RawQuestion;
  /** The reply's ID, copied flags and EDNS state; rcode NOERROR and no records yet. */
  parts: ReplyParts;
  /** The reply's size limit on this transport. */
  limit: number;
}

/**
 * Decodes a query packet with dns-packet and checks its header: a result when the packet is
 * dropped (too short, a response, unparsable) or refused by protocol alone (FORMERR for zero or
 * several questions, several or misplaced OPT records or trailing bytes; NOTIMP for an opcode
 * other than QUERY; BADVERS for EDNS above version 0), else the question to look up.
 */
export function parseQuery(query: Buffer, transport: DnsTransport): DnsResult | ParsedQuery {
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
    flags: (header & OPCODE_MASK) | (header & COPIED_FLAGS),
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
  if ((header & OPCODE_MASK) !== 0) {
    return encodeReply({ ...parts, rcode: 'NOTIMP' }, question?.bytes ?? NO_QUESTION, limit);
  }
  if (question === undefined || trailing) {
    return encodeReply({ ...parts, rcode: 'FORMERR' }, NO_QUESTION, limit);
  }
  if (opt !== undefined && opt.ednsVersion > 0) {
    return encodeReply({ ...parts, rcode: 'BADVERS' }, question.bytes, limit);
  }
  return { kind: 'query', question, parts, limit };
}
