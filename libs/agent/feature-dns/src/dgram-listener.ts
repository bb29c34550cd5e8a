import dgram from 'node:dgram';
import net from 'node:net';
import type { DnsCounters } from './dns-counters';
import type { DnsTransport } from './dns-zone-types';
import { UdpFastPath } from './udp-fast-path';

/** Answers one packet (counting it), or undefined when nothing is sent back; never throws. */
export type PacketHandler = (packet: Buffer, transport: DnsTransport) => Buffer | undefined;

/**
 * Resolves the peer address of a reply, which is always a literal (the sender's), at once:
 * dgram's default goes through dns.lookup and a tick for every datagram sent.
 */
function literalLookup(
  address: string,
  family: unknown,
  callback: (err: Error | null, address: string, family: number) => void,
): void {
  callback(null, address, net.isIPv6(address) ? 6 : 4);
}

/**
 * Node's dgram socket answering every datagram with `handle`: the UDP listener when the fast
 * path cannot run. Rejects with the bind error; later socket errors count as `socketErrors`.
 */
export function bindDgram(
  host: string,
  port: number,
  bufferBytes: number,
  handle: PacketHandler,
  stats: DnsCounters,
): Promise<dgram.Socket> {
  return new Promise((resolve, reject) => {
    const socket = dgram.createSocket({
      type: net.isIPv6(host) ? 'udp6' : 'udp4',
      recvBufferSize: bufferBytes,
      sendBufferSize: bufferBytes,
      lookup: literalLookup,
    });
    const onBindError = (err: Error) => {
      socket.close();
      reject(err);
    };
    socket.once('error', onBindError);
    socket.on('message', (msg, peer) => {
      const reply = handle(msg, 'udp');
      // No callback: Node then sends synchronously when it can, without a request object
      // or a tick per reply; a failure arrives as an 'error' event, counted below.
      if (reply !== undefined) socket.send(reply, peer.port, peer.address);
    });
    socket.bind({ address: host, port, exclusive: true }, () => {
      socket.off('error', onBindError);
      socket.on('error', () => {
        stats.socketErrors++;
      });
      resolve(socket);
    });
  });
}

/** Closes either UDP listener and waits until its socket is closed. */
export function closeUdp(udp: UdpFastPath | dgram.Socket): Promise<void> {
  if (udp instanceof UdpFastPath) return udp.close();
  return new Promise<void>((resolve) => udp.close(() => resolve()));
}
