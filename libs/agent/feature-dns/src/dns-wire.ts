import * as dnsPacket from 'dns-packet';
import type { DnsRcodeName } from './dns-zone-types';

// DNS header bits, record types and classes, and the few byte-level reads and writes that
// dns-packet does not offer: the zone answers with the query's own question bytes and reads the
// common query straight from the packet (DESIGN.md §6 item 33).

/** Numeric value of each rcode this server sends (BADVERS only fits the EDNS extended rcode). */
export const RCODE_VALUE: Readonly<Record<DnsRcodeName, number>> = {
  NOERROR: 0,
  FORMERR: 1,
  SERVFAIL: 2,
  NXDOMAIN: 3,
  NOTIMP: 4,
  REFUSED: 5,
  BADVERS: 16,
};
/** Header bit: a response. */
export const QR = 0x8000;
/** Header bit: an authoritative answer. */
export const AA = dnsPacket.AUTHORITATIVE_ANSWER;
/** Header bit: truncated. */
export const TC = dnsPacket.TRUNCATED_RESPONSE;
/** Header bit: recursion desired (copied into the reply). */
export const RD = dnsPacket.RECURSION_DESIRED;
/** Header bit: checking disabled (copied into the reply). */
export const CD = dnsPacket.CHECKING_DISABLED;
/** The query's header bits a reply carries back. */
export const COPIED_FLAGS = RD | CD;
/** Header bits of the opcode. */
export const OPCODE_MASK = 0x7800;
/** NS record type. */
export const TYPE_NS = 2;
/** SOA record type. */
export const TYPE_SOA = 6;
/** AAAA record type. */
export const TYPE_AAAA = 28;
/** OPT pseudo-record type (EDNS). */
export const TYPE_OPT = 41;
/** IXFR query type (refused). */
export const TYPE_IXFR = 251;
/** AXFR query type (refused). */
export const TYPE_AXFR = 252;
/** ANY query type. */
export const TYPE_ANY = 255;
/** Class IN. */
export const CLASS_IN = 1;
/** Class ANY (answered as IN). */
export const CLASS_ANY = 255;
/** The reply size limit over TCP: a length prefix's range. */
export const TCP_LIMIT = 65535;
/** The question of a reply that carries none (FORMERR). */
export const NO_QUESTION = Buffer.alloc(0);

/** A name has at most 127 labels (254 bytes); the fast path's scratch holds their offsets. */
export const LABEL_STARTS = new Int32Array(128);
/** Scratch for a lowercased `<name>.<namespace>` key (two labels of at most 63 bytes). */
export const KEY_SCRATCH = Buffer.alloc(128);
/** The zone apex's labels, lowercase. */
export const ZONE_LABELS = ['svc', 'cluster', 'local'].map((label) => Buffer.from(label, 'latin1'));

/** `body` (a reply without question) with `question` inserted after its header and QDCOUNT 1. */
export function spliceQuestion(body: Buffer, question: Buffer): Buffer {
  if (question.length === 0) return body;
  const out = Buffer.allocUnsafe(body.length + question.length);
  body.copy(out, 0, 0, 12);
  out.writeUInt16BE(1, 4);
  question.copy(out, 12);
  body.copy(out, 12 + question.length, 12);
  return out;
}

/** The first question read from raw bytes: lowercased labels, type, class and its byte range. */
export interface RawQuestion {
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
export function readQuestion(query: Buffer): RawQuestion | undefined {
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

/** True when the label at `start` of `query` is `label` (lowercase ASCII), in any letter case. */
export function labelIs(query: Buffer, start: number, label: Buffer): boolean {
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
export function lowerLabel(query: Buffer, start: number, at: number): number {
  const length = query[start] ?? 0;
  for (let i = 0; i < length; i++) {
    const byte = query[start + 1 + i] ?? 0;
    if (byte >= 0x80) return -1;
    KEY_SCRATCH[at + i] = byte >= 0x41 && byte <= 0x5a ? byte | 0x20 : byte;
  }
  return at + length;
}
