import { DataplaneError } from '../dataplane-error';
import { IPPROTO, addressBytes, addressText } from '../maps/layout';

// Ethernet + IPv6 + TCP/UDP frames for BPF_PROG_TEST_RUN (the packet-level tier and the bench)
// and their decoding. Hand-written: a few fixed headers, no options or extension headers, and
// the Internet checksum over the IPv6 pseudo-header (RFC 8200 §8.1).

const ETH_LEN = 14;
const IP6_LEN = 40;
const L4_OFF = ETH_LEN + IP6_LEN;
const ETH_P_IPV6 = 0x86dd;
/** ICMPv6's IP protocol number. */
export const IPPROTO_ICMPV6 = 58;

/** TCP header flag bits (byte 13). */
export const TCP_FLAGS = { FIN: 0x01, SYN: 0x02, RST: 0x04, PSH: 0x08, ACK: 0x10 } as const;

/** One packet to build: an IPv6 TCP or UDP frame. */
export interface FrameSpec {
  src: string;
  dst: string;
  proto: number;
  sport: number;
  dport: number;
  /** TCP flags (TCP_FLAGS bits); default SYN. */
  tcpFlags?: number;
  seq?: number;
  ack?: number;
  payload?: Buffer;
  /** Ethernet addresses, 6 bytes each (default 02:00:00:00:00:01 → 02:00:00:00:00:02). */
  srcMac?: Buffer;
  dstMac?: Buffer;
}

/** A decoded frame: the Ethernet, IPv6 and first L4 fields the dataplane touches. */
export interface DecodedFrame {
  dstMac: string;
  srcMac: string;
  src: string;
  dst: string;
  proto: number;
  hopLimit: number;
  payloadLength: number;
  /** TCP/UDP ports (0 for ICMPv6). */
  sport: number;
  dport: number;
  tcpFlags: number;
  seq: number;
  ack: number;
  /** ICMPv6 type and code (0 otherwise). */
  icmpType: number;
  icmpCode: number;
}

/** The 16-bit one's-complement sum of `bufs`, folded (not inverted). */
function onesSum(bufs: Buffer[]): number {
  let sum = 0;
  for (const buf of bufs) {
    for (let i = 0; i + 1 < buf.length; i += 2) sum += buf.readUInt16BE(i);
    if (buf.length % 2 === 1) sum += (buf[buf.length - 1] as number) << 8;
  }
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return sum;
}

function pseudoHeader(frame: Buffer, l4Length: number, proto: number): Buffer {
  const ph = Buffer.alloc(40);
  frame.copy(ph, 0, ETH_LEN + 8, ETH_LEN + 40); // source and destination addresses
  ph.writeUInt32BE(l4Length, 32);
  ph.writeUInt32BE(proto, 36);
  return ph;
}

function macBytes(mac: Buffer | undefined, last: number): Buffer {
  if (mac === undefined) return Buffer.from([2, 0, 0, 0, 0, last]);
  if (mac.length !== 6)
    throw new DataplaneError('INVALID_ARGUMENT', `a MAC address is 6 bytes, not ${mac.length}`);
  return mac;
}

/** Builds an Ethernet + IPv6 + TCP (20-byte header) or UDP frame with a valid L4 checksum. */
export function ipv6Frame(spec: FrameSpec): Buffer {
  if (spec.proto !== IPPROTO.TCP && spec.proto !== IPPROTO.UDP)
    throw new DataplaneError(
      'INVALID_ARGUMENT',
      `frame proto ${spec.proto}: only TCP (6) and UDP (17) are built`,
    );
  const payload = spec.payload ?? Buffer.alloc(0);
  const l4Header = spec.proto === IPPROTO.TCP ? 20 : 8;
  const l4Length = l4Header + payload.length;
  const frame = Buffer.alloc(L4_OFF + l4Length);
  macBytes(spec.dstMac, 2).copy(frame, 0);
  macBytes(spec.srcMac, 1).copy(frame, 6);
  frame.writeUInt16BE(ETH_P_IPV6, 12);
  frame.writeUInt32BE(0x60000000, ETH_LEN);
  frame.writeUInt16BE(l4Length, ETH_LEN + 4);
  frame.writeUInt8(spec.proto, ETH_LEN + 6);
  frame.writeUInt8(64, ETH_LEN + 7);
  addressBytes(spec.src).copy(frame, ETH_LEN + 8);
  addressBytes(spec.dst).copy(frame, ETH_LEN + 24);
  frame.writeUInt16BE(spec.sport, L4_OFF);
  frame.writeUInt16BE(spec.dport, L4_OFF + 2);
  let csumOff: number;
  if (spec.proto === IPPROTO.TCP) {
    frame.writeUInt32BE((spec.seq ?? 1000) >>> 0, L4_OFF + 4);
    frame.writeUInt32BE((spec.ack ?? 0) >>> 0, L4_OFF + 8);
    frame.writeUInt8(5 << 4, L4_OFF + 12); // data offset: 5 words
    frame.writeUInt8(spec.tcpFlags ?? TCP_FLAGS.SYN, L4_OFF + 13);
    frame.writeUInt16BE(64240, L4_OFF + 14); // window
    csumOff = L4_OFF + 16;
  } else {
    frame.writeUInt16BE(l4Length, L4_OFF + 4);
    csumOff = L4_OFF + 6;
  }
  payload.copy(frame, L4_OFF + l4Header);
  const sum = onesSum([pseudoHeader(frame, l4Length, spec.proto), frame.subarray(L4_OFF)]);
  let csum = ~sum & 0xffff;
  if (csum === 0 && spec.proto === IPPROTO.UDP) csum = 0xffff; // 0 means "none" for UDP
  frame.writeUInt16BE(csum, csumOff);
  return frame;
}

/**
 * Whether the frame's TCP, UDP or ICMPv6 checksum is valid over the pseudo-header and the
 * IPv6 payload (the sum of everything, checksum included, is 0xffff).
 */
export function l4ChecksumValid(frame: Buffer): boolean {
  const proto = frame.readUInt8(ETH_LEN + 6);
  const l4Length = frame.readUInt16BE(ETH_LEN + 4);
  if (frame.length < L4_OFF + l4Length) return false;
  const l4 = frame.subarray(L4_OFF, L4_OFF + l4Length);
  if (proto === IPPROTO.UDP && l4.readUInt16BE(6) === 0) return false; // IPv6 requires one
  return onesSum([pseudoHeader(frame, l4Length, proto), l4]) === 0xffff;
}

function macText(buf: Buffer, offset: number): string {
  return [...buf.subarray(offset, offset + 6)]
    .map((b) => b.toString(16).padStart(2, '0'))
    .join(':');
}

/** Decodes the fields of an Ethernet + IPv6 frame the dataplane reads or writes. */
export function decodeFrame(frame: Buffer): DecodedFrame {
  if (frame.length < L4_OFF + 4 || frame.readUInt16BE(12) !== ETH_P_IPV6)
    throw new DataplaneError(
      'INVALID_ARGUMENT',
      `not an Ethernet IPv6 frame with an L4 header (${frame.length} bytes)`,
    );
  const proto = frame.readUInt8(ETH_LEN + 6);
  const isTcp = proto === IPPROTO.TCP && frame.length >= L4_OFF + 20;
  const isIcmp = proto === IPPROTO_ICMPV6;
  return {
    dstMac: macText(frame, 0),
    srcMac: macText(frame, 6),
    src: addressText(frame, ETH_LEN + 8),
    dst: addressText(frame, ETH_LEN + 24),
    proto,
    hopLimit: frame.readUInt8(ETH_LEN + 7),
    payloadLength: frame.readUInt16BE(ETH_LEN + 4),
    sport: isIcmp ? 0 : frame.readUInt16BE(L4_OFF),
    dport: isIcmp ? 0 : frame.readUInt16BE(L4_OFF + 2),
    tcpFlags: isTcp ? frame.readUInt8(L4_OFF + 13) : 0,
    seq: isTcp ? frame.readUInt32BE(L4_OFF + 4) : 0,
    ack: isTcp ? frame.readUInt32BE(L4_OFF + 8) : 0,
    icmpType: isIcmp ? frame.readUInt8(L4_OFF) : 0,
    icmpCode: isIcmp ? frame.readUInt8(L4_OFF + 1) : 0,
  };
}
