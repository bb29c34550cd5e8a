import * as dnsPacket from 'dns-packet';
import type { Answer } from 'dns-packet';
import { RCODE_VALUE, TC, spliceQuestion } from './dns-wire';
import {
  DNS_CLASSIC_UDP_PAYLOAD,
  DNS_SERVER_UDP_PAYLOAD,
  type DnsRcodeName,
  type DnsResult,
} from './dns-zone-types';

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

/** A reply without question (QDCOUNT 0) with these sections and `extra` header bits. */
export function encodeParts(
  parts: ReplyParts,
  answers: Answer[],
  authorities: Answer[],
  extra: number,
): Buffer {
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

/** The UDP reply limit: 512 without EDNS, else the client's size floored at 512, capped at ours. */
export function udpReplyLimit(clientPayload: number | undefined): number {
  if (clientPayload === undefined) return DNS_CLASSIC_UDP_PAYLOAD;
  return Math.min(DNS_SERVER_UDP_PAYLOAD, Math.max(DNS_CLASSIC_UDP_PAYLOAD, clientPayload));
}
