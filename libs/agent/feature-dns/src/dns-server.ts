import dgram from 'node:dgram';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { DnsError } from './dns-error';
import { TcpConnectionTable } from './tcp-connection-table';
import { DnsZone, type DnsRcodeName, type DnsResult, type DnsTransport } from './dns-zone';
import {
  defaultUdpWorkerFile,
  UdpBindError,
  UdpFastPath,
  UdpFastPathUnavailable,
} from './udp-fast-path';
import { COUNTER_NAMES, type CounterName } from './udp-protocol';

/** What the server answers from: a DnsZone, or anything resolving packets the same way. */
export interface DnsAnswerer {
  resolve(packet: Buffer, transport: DnsTransport): DnsResult;
}

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

/** Which UDP listener serves, and why dgram when it is dgram. */
export interface DnsUdpPath {
  path: 'recvmmsg-worker' | 'dgram';
  reason?: string;
}

/** What the server has seen since it started. */
export interface DnsCounters {
  /** Packets received (UDP datagrams and TCP messages). */
  received: number;
  /** Replies sent, by rcode. */
  responses: Record<DnsRcodeName, number>;
  /** UDP replies sent with TC=1. */
  truncated: number;
  /** Packets dropped because they do not parse. */
  malformed: number;
  /** Packets dropped because they are responses (QR=1). */
  notQueries: number;
  /** Packets whose handling threw (a bug; the packet is dropped, the server keeps running). */
  failed: number;
  /** TCP connections accepted. */
  tcpAccepted: number;
  /** TCP connections refused over a limit: each one that could make room had a query in progress. */
  tcpRefused: number;
  /** Idle TCP connections closed to make room for a new one over a limit. */
  tcpEvicted: number;
  /** TCP connections closed by the idle timeout. */
  tcpIdleClosed: number;
  /** Socket errors (send failures, resets). */
  socketErrors: number;
}

/** The bound address: UDP and TCP share the port. */
export interface DnsServerAddress {
  host: string;
  port: number;
}

const DEFAULT_PORT = 1053;
const PORT_ATTEMPTS = 20;

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

/** How often idle TCP connections are looked for, as a fraction of the shorter timeout. */
const IDLE_SWEEPS_PER_TIMEOUT = 4;

function emptyCounters(): DnsCounters {
  return {
    received: 0,
    responses: {
      NOERROR: 0,
      FORMERR: 0,
      SERVFAIL: 0,
      NXDOMAIN: 0,
      NOTIMP: 0,
      REFUSED: 0,
      BADVERS: 0,
    },
    truncated: 0,
    malformed: 0,
    notQueries: 0,
    failed: 0,
    tcpAccepted: 0,
    tcpRefused: 0,
    tcpEvicted: 0,
    tcpIdleClosed: 0,
    socketErrors: 0,
  };
}

const LOOPBACK = new net.BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** True for 127.0.0.0/8 and ::1 in any spelling: the server must never be reachable off the node. */
export function isLoopbackAddress(host: string): boolean {
  const family = net.isIP(host);
  return family !== 0 && LOOPBACK.check(host, family === 6 ? 'ipv6' : 'ipv4');
}

function isRcode(name: CounterName): name is DnsRcodeName {
  return name.toUpperCase() === name;
}

function closeUdp(udp: UdpFastPath | dgram.Socket): Promise<void> {
  if (udp instanceof UdpFastPath) return udp.close();
  return new Promise<void>((resolve) => udp.close(() => resolve()));
}

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
 * The agent's authoritative DNS listeners: one UDP socket and one TCP server on the same
 * loopback port. The zone is swapped by `replaceZone` without touching the sockets (recreating
 * them on reconfiguration loses queries, aardvark-dns#389); a packet that fails is counted and
 * dropped, never fatal.
 */
export class DnsServer {
  private zone: DnsAnswerer;
  private readonly options: Required<DnsServerOptions>;
  private readonly stats = emptyCounters();
  private udp: dgram.Socket | undefined;
  private fast: UdpFastPath | undefined;
  private udpMode: DnsUdpPath = { path: 'dgram', reason: 'not listening' };
  private tcp: net.Server | undefined;
  private readonly connections: TcpConnectionTable<net.Socket>;
  /** Connections holding the first bytes of a query not yet complete. */
  private readonly midQuery = new Set<net.Socket>();
  private idleSweep: NodeJS.Timeout | undefined;
  private bound: DnsServerAddress | undefined;

  constructor(zone: DnsAnswerer, options: DnsServerOptions = {}) {
    this.zone = zone;
    const tcpIdleTimeoutMs = options.tcpIdleTimeoutMs ?? DNS_TCP_IDLE_TIMEOUT_MS;
    this.options = {
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
    if (!isLoopbackAddress(this.options.host)) {
      throw new DnsError(
        'INVALID_ARGUMENT',
        `starting the Service DNS server: ${this.options.host} is not a loopback address`,
      );
    }
    const bad = (
      [
        'tcpIdleTimeoutMs',
        'tcpIdleTimeoutUnderLoadMs',
        'maxTcpConnections',
        'maxTcpConnectionsPerSource',
      ] as const
    ).filter((key) => !(Number.isSafeInteger(this.options[key]) && this.options[key] > 0));
    if (bad.length > 0) {
      throw new DnsError(
        'INVALID_ARGUMENT',
        `starting the Service DNS server: ${bad.map((key) => `${key} ${this.options[key]}`).join(', ')} ` +
          'not a positive integer',
      );
    }
    // A query in progress: bytes of an incomplete one, or replies the client has not taken yet.
    this.connections = new TcpConnectionTable<net.Socket>(
      {
        maxConnections: this.options.maxTcpConnections,
        maxPerSource: this.options.maxTcpConnectionsPerSource,
        idleTimeoutMs: this.options.tcpIdleTimeoutMs,
        idleTimeoutUnderLoadMs: this.options.tcpIdleTimeoutUnderLoadMs,
      },
      (socket) => this.midQuery.has(socket) || socket.writableLength > 0,
    );
  }

  /** The zone currently answered. */
  get currentZone(): DnsAnswerer {
    return this.zone;
  }

  /**
   * Answers from `zone` from the next packet on; sockets stay as they are. With the UDP fast
   * path, `zone` must be a DnsZone (its view is what the worker answers from).
   */
  replaceZone(zone: DnsAnswerer): void {
    if (this.fast !== undefined) {
      if (!(zone instanceof DnsZone)) {
        throw new DnsError(
          'INVALID_ARGUMENT',
          'replacing the Service DNS zone: the UDP fast path answers from a DnsZone only',
        );
      }
      this.fast.setZone(zone.view());
    }
    this.zone = zone;
  }

  /** Which UDP listener serves: the recvmmsg worker, or dgram and why. */
  udpPath(): DnsUdpPath {
    return { ...this.udpMode };
  }

  /** A copy of the counters (both listeners' together). */
  counters(): DnsCounters {
    const out = { ...this.stats, responses: { ...this.stats.responses } };
    const fast = this.fast;
    if (fast === undefined) return out;
    for (const name of COUNTER_NAMES) {
      const value = fast.counter(name);
      if (isRcode(name)) out.responses[name] += value;
      else out[name] += value;
    }
    return out;
  }

  /** The bound address (after `listen`). */
  address(): DnsServerAddress {
    if (this.bound === undefined) {
      throw new DnsError('INTERNAL', 'reading the DNS server address: not listening');
    }
    return this.bound;
  }

  /** Binds UDP and TCP on the configured port (a shared free one for port 0). */
  async listen(): Promise<DnsServerAddress> {
    if (this.bound !== undefined) return this.bound;
    const { host, port } = this.options;
    let lastError: unknown;
    for (let attempt = 0; attempt < (port === 0 ? PORT_ATTEMPTS : 1); attempt++) {
      const udp = await this.bindAnyUdp(host, port).catch((err: unknown) => {
        lastError = err;
        return undefined;
      });
      if (udp === undefined) continue;
      const udpPort = udp instanceof UdpFastPath ? udp.port : udp.address().port;
      const tcp = await this.bindTcp(host, udpPort).catch((err: unknown) => {
        lastError = err;
        return undefined;
      });
      if (tcp === undefined) {
        await closeUdp(udp);
        continue;
      }
      if (udp instanceof UdpFastPath) this.fast = udp;
      else this.udp = udp;
      this.tcp = tcp;
      this.bound = { host, port: udpPort };
      return this.bound;
    }
    throw new DnsError('IO_ERROR', `binding the Service DNS server to ${host} port ${port}`, {
      cause: lastError,
    });
  }

  /** Stops listening, closes every TCP connection and waits until both sockets are closed. */
  async close(): Promise<void> {
    const { udp, tcp, fast } = this;
    this.udp = undefined;
    this.fast = undefined;
    this.tcp = undefined;
    this.bound = undefined;
    this.stopIdleSweep();
    for (const socket of this.connections.connections()) {
      this.connections.remove(socket);
      socket.destroy();
    }
    this.midQuery.clear();
    await Promise.all([
      udp ? closeUdp(udp) : undefined,
      // The worker's counts stay in the totals once it has stopped counting.
      fast?.close().then(() => this.absorb(fast)),
      tcp ? new Promise<void>((resolve) => tcp.close(() => resolve())) : undefined,
    ]);
  }

  /** Answers one packet from the current zone, counting the outcome; never throws. */
  private handle(packet: Buffer, transport: DnsTransport): Buffer | undefined {
    this.stats.received++;
    try {
      const result = this.zone.resolve(packet, transport);
      if (result.kind === 'drop') {
        if (result.reason === 'malformed') this.stats.malformed++;
        else this.stats.notQueries++;
        return undefined;
      }
      this.stats.responses[result.rcode]++;
      if (result.truncated) this.stats.truncated++;
      return result.bytes;
    } catch {
      this.stats.failed++;
      return undefined;
    }
  }

  /**
   * The fast path when it can start here, else dgram. A bind failure of either is the same
   * failure (a taken port is taken for both); only the fast path's absence falls back.
   */
  private async bindAnyUdp(host: string, port: number): Promise<UdpFastPath | dgram.Socket> {
    const file = this.options.udpWorkerFile;
    if (file === null) {
      this.udpMode = { path: 'dgram', reason: 'the UDP fast path is turned off' };
      return this.bindUdp(host, port);
    }
    if (!(this.zone instanceof DnsZone)) {
      this.udpMode = { path: 'dgram', reason: 'the answerer is not a DnsZone' };
      return this.bindUdp(host, port);
    }
    try {
      const fast = await UdpFastPath.start({
        workerFile: file,
        host,
        port,
        bufferBytes: this.options.udpReceiveBufferBytes,
        zone: this.zone.view(),
        onExit: (reason) => void this.replaceDeadWorker(reason),
      });
      this.udpMode = { path: 'recvmmsg-worker' };
      return fast;
    } catch (err) {
      if (err instanceof UdpBindError) throw err;
      const reason = err instanceof UdpFastPathUnavailable ? err.message : String(err);
      this.udpMode = { path: 'dgram', reason };
      return this.bindUdp(host, port);
    }
  }

  /** A worker that died (it closed its socket): the same port is served by dgram from now on. */
  private async replaceDeadWorker(reason: string): Promise<void> {
    const dead = this.fast;
    const bound = this.bound;
    if (dead === undefined || bound === undefined) return;
    this.fast = undefined;
    this.absorb(dead);
    this.stats.failed++;
    this.udpMode = { path: 'dgram', reason };
    try {
      this.udp = await this.bindUdp(bound.host, bound.port);
    } catch {
      this.stats.socketErrors++;
    }
  }

  /** Adds a finished worker's counts to this side's. */
  private absorb(fast: UdpFastPath): void {
    for (const name of COUNTER_NAMES) {
      const value = fast.counter(name);
      if (isRcode(name)) this.stats.responses[name] += value;
      else this.stats[name] += value;
    }
  }

  private bindUdp(host: string, port: number): Promise<dgram.Socket> {
    return new Promise((resolve, reject) => {
      const socket = dgram.createSocket({
        type: net.isIPv6(host) ? 'udp6' : 'udp4',
        recvBufferSize: this.options.udpReceiveBufferBytes,
        sendBufferSize: this.options.udpReceiveBufferBytes,
        lookup: literalLookup,
      });
      const onBindError = (err: Error) => {
        socket.close();
        reject(err);
      };
      socket.once('error', onBindError);
      socket.on('message', (msg, peer) => {
        const reply = this.handle(msg, 'udp');
        // No callback: Node then sends synchronously when it can, without a request object
        // or a tick per reply; a failure arrives as an 'error' event, counted below.
        if (reply !== undefined) socket.send(reply, peer.port, peer.address);
      });
      socket.bind({ address: host, port, exclusive: true }, () => {
        socket.off('error', onBindError);
        socket.on('error', () => {
          this.stats.socketErrors++;
        });
        resolve(socket);
      });
    });
  }

  private bindTcp(host: string, port: number): Promise<net.Server> {
    return new Promise((resolve, reject) => {
      const server = net.createServer((socket) => this.serveConnection(socket));
      server.once('error', reject);
      server.listen({ host, port, exclusive: true }, () => {
        server.off('error', reject);
        server.on('error', () => {
          this.stats.socketErrors++;
        });
        resolve(server);
      });
    });
  }

  /** RFC 7766 framing: 2-byte length prefix, any number of (pipelined) queries per connection. */
  private serveConnection(socket: net.Socket): void {
    socket.on('error', () => {
      this.stats.socketErrors++;
    });
    // A socket closed before it was handed over has no address: one source for all of them.
    const admission = this.connections.add(socket, socket.remoteAddress ?? '', performance.now());
    if (!admission.admitted) {
      this.stats.tcpRefused++;
      socket.destroy();
      return;
    }
    for (const evicted of admission.evicted) {
      this.stats.tcpEvicted++;
      this.midQuery.delete(evicted);
      evicted.destroy();
    }
    this.stats.tcpAccepted++;
    this.startIdleSweep();
    socket.setNoDelay(true);
    socket.on('close', () => {
      this.connections.remove(socket);
      this.midQuery.delete(socket);
    });
    let pending: Buffer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      let offset = 0;
      while (pending.length - offset >= 2) {
        const length = pending.readUInt16BE(offset);
        if (pending.length - offset - 2 < length) break;
        const message = pending.subarray(offset + 2, offset + 2 + length);
        offset += 2 + length;
        const reply = this.handle(message, 'tcp');
        if (reply === undefined || socket.destroyed) continue;
        const framed = Buffer.allocUnsafe(2 + reply.length);
        framed.writeUInt16BE(reply.length, 0);
        reply.copy(framed, 2);
        // A client that does not read its replies stops being read from: memory stays bounded.
        if (!socket.write(framed) && !socket.isPaused()) {
          socket.pause();
          socket.once('drain', () => socket.resume());
        }
      }
      // Idle time counts from the last complete query: trickled bytes do not extend it.
      if (offset > 0) this.connections.touch(socket, performance.now());
      pending = offset === pending.length ? Buffer.alloc(0) : pending.subarray(offset);
      if (pending.length === 0) this.midQuery.delete(socket);
      else this.midQuery.add(socket);
    });
  }

  /** Closes idle connections every fraction of the shorter timeout while any is open. */
  private startIdleSweep(): void {
    if (this.idleSweep !== undefined) return;
    const shorter = Math.min(this.options.tcpIdleTimeoutMs, this.options.tcpIdleTimeoutUnderLoadMs);
    this.idleSweep = setInterval(
      () => {
        for (const socket of this.connections.expire(performance.now())) {
          this.stats.tcpIdleClosed++;
          this.midQuery.delete(socket);
          socket.destroy();
        }
        if (this.connections.size === 0) this.stopIdleSweep();
      },
      Math.ceil(shorter / IDLE_SWEEPS_PER_TIMEOUT),
    );
    // The sockets keep the process alive, not this timer.
    this.idleSweep.unref();
  }

  private stopIdleSweep(): void {
    clearInterval(this.idleSweep);
    this.idleSweep = undefined;
  }
}
