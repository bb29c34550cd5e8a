import net from 'node:net';
import { DnsError } from './dns-error';
import { defaultUdpWorkerFile } from './udp-fast-path';

/** Where and how the server listens. */
export interface DnsServerOptions {
  /** A loopback address (127.0.0.0/8 or ::1); default 127.0.0.1. */
  host?: string;
  /** UDP and TCP port; 0 picks one free for both. Default 1053. */
  port?: number;
  /**
   * A TCP connection with no complete query for this long since its last one (or its accept)
   * is closed. Default `DNS_TCP_IDLE_TIMEOUT_MS`.
   */
  tcpIdleTimeoutMs?: number;
  /**
   * The same while more than half of `maxTcpConnections` are open. Default
   * `DNS_TCP_IDLE_TIMEOUT_UNDER_LOAD_MS`, or `tcpIdleTimeoutMs` when that is shorter.
   */
  tcpIdleTimeoutUnderLoadMs?: number;
  /**
   * Open TCP connections at most: a new one over it closes the connection idle the longest;
   * refused only when every open one has a query in progress. Default `DNS_TCP_MAX_CONNECTIONS`.
   */
  maxTcpConnections?: number;
  /**
   * Open TCP connections of one source address at most: over it, that source's connection idle
   * the longest is closed. Default `DNS_TCP_MAX_CONNECTIONS_PER_SOURCE`.
   */
  maxTcpConnectionsPerSource?: number;
  /** SO_RCVBUF and SO_SNDBUF of the UDP socket, for bursts (capped by net.core.rmem_max and wmem_max). Default 1 MiB. */
  udpReceiveBufferBytes?: number;
  /**
   * The UDP fast path's worker bundle (`agent-dns-udp.cjs`), or null for Node's dgram socket.
   * Default: beside the running bundle. Without the file, koffi or libc, or when the zone is
   * not a DnsZone, UDP falls back to dgram (see `udpPath()`).
   */
  udpWorkerFile?: string | null;
}

const DEFAULT_PORT = 1053;

/**
 * Open TCP connections at most. TCP is the fallback path here (one AAAA never needs TC; TCP
 * is `dig +tcp`, a forwarder's retry, a client preferring it), so real use is a handful; 256
 * leaves a wide margin for that and still bounds the descriptors and memory a flood can pin.
 * Over it the connection idle the longest is closed (RFC 7766 §6.2.3), not the newcomer, so
 * the cap no longer decides who is served.
 */
export const DNS_TCP_MAX_CONNECTIONS = 256;

/**
 * Open TCP connections of one source address at most: a quarter of the total, so one address
 * flooding (a local user can bind any of 127.0.0.0/8) recycles only its own connections and
 * leaves three quarters for the others, while 64 is still far above what one client needs.
 */
export const DNS_TCP_MAX_CONNECTIONS_PER_SOURCE = 64;

/**
 * Idle timeout of a TCP connection, from its last complete query or its accept. RFC 7766
 * §6.2.3 suggests a few seconds; clients here are on loopback and write their query right after
 * connecting, and a client reusing a connection must reopen one the server closed. 3 s (was
 * 10 s) holds a connection between a forwarder's queries without letting idle ones pile up.
 */
export const DNS_TCP_IDLE_TIMEOUT_MS = 3_000;

/**
 * Idle timeout while more than half of `DNS_TCP_MAX_CONNECTIONS` are open: a flood is then
 * likely, and 1 s is still about a thousand loopback round trips for a client to send its query
 * after connecting, even on a busy node.
 */
export const DNS_TCP_IDLE_TIMEOUT_UNDER_LOAD_MS = 1_000;

const LOOPBACK = new net.BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** True for 127.0.0.0/8 and ::1 in any spelling: the server must never be reachable off the node. */
export function isLoopbackAddress(host: string): boolean {
  const family = net.isIP(host);
  return family !== 0 && LOOPBACK.check(host, family === 6 ? 'ipv6' : 'ipv4');
}

/**
 * The options with every default filled in; throws a DnsError (INVALID_ARGUMENT) for a host
 * off loopback or a TCP limit that is not a positive integer, naming each bad value.
 */
export function resolveDnsServerOptions(options: DnsServerOptions): Required<DnsServerOptions> {
  const tcpIdleTimeoutMs = options.tcpIdleTimeoutMs ?? DNS_TCP_IDLE_TIMEOUT_MS;
  const resolved: Required<DnsServerOptions> = {
    host: options.host ?? '127.0.0.1',
    port: options.port ?? DEFAULT_PORT,
    tcpIdleTimeoutMs,
    tcpIdleTimeoutUnderLoadMs:
      options.tcpIdleTimeoutUnderLoadMs ??
      Math.min(DNS_TCP_IDLE_TIMEOUT_UNDER_LOAD_MS, tcpIdleTimeoutMs),
    maxTcpConnections: options.maxTcpConnections ?? DNS_TCP_MAX_CONNECTIONS,
    maxTcpConnectionsPerSource:
      options.maxTcpConnectionsPerSource ?? DNS_TCP_MAX_CONNECTIONS_PER_SOURCE,
    udpReceiveBufferBytes: options.udpReceiveBufferBytes ?? 1024 * 1024,
    udpWorkerFile:
      options.udpWorkerFile === undefined ? defaultUdpWorkerFile() : options.udpWorkerFile,
  };
  if (!isLoopbackAddress(resolved.host)) {
    throw new DnsError(
      'INVALID_ARGUMENT',
      `starting the Service DNS server: ${resolved.host} is not a loopback address`,
    );
  }
  const bad = (
    [
      'tcpIdleTimeoutMs',
      'tcpIdleTimeoutUnderLoadMs',
      'maxTcpConnections',
      'maxTcpConnectionsPerSource',
    ] as const
  ).filter((key) => !(Number.isSafeInteger(resolved[key]) && resolved[key] > 0));
  if (bad.length > 0) {
    throw new DnsError(
      'INVALID_ARGUMENT',
      `starting the Service DNS server: ${bad.map((key) => `${key} ${resolved[key]}`).join(', ')} ` +
        'not a positive integer',
    );
  }
  return resolved;
}
