import type dgram from 'node:dgram';
import { bindDgram, closeUdp } from './dgram-listener';
import { addWorkerCounters, emptyCounters, type DnsCounters } from './dns-counters';
import { DnsError } from './dns-error';
import { resolveDnsServerOptions, type DnsServerOptions } from './dns-server-options';
import { DnsTcpListener } from './dns-tcp-listener';
import { DnsZone } from './dns-zone';
import type { DnsResult, DnsTransport } from './dns-zone-types';
import { UdpBindError, UdpFastPath, UdpFastPathUnavailable } from './udp-fast-path';

/** What the server answers from: a DnsZone, or anything resolving packets the same way. */
export interface DnsAnswerer {
  resolve(packet: Buffer, transport: DnsTransport): DnsResult;
}

/** Which UDP listener serves, and why dgram when it is dgram. */
export interface DnsUdpPath {
  path: 'recvmmsg-worker' | 'dgram';
  reason?: string;
}

/** The bound address: UDP and TCP share the port. */
export interface DnsServerAddress {
  host: string;
  port: number;
}

const PORT_ATTEMPTS = 20;

/**
 * The agent's authoritative DNS listeners: one UDP socket and one TCP server on the same
 * loopback port. The zone is swapped by `replaceZone` without touching the sockets (recreating
 * them on reconfiguration loses queries, aardvark-dns#389); a packet that fails is counted and
 * dropped, never fatal. UDP is the recvmmsg worker (udp-fast-path.ts) or Node's dgram
 * (dgram-listener.ts); TCP is dns-tcp-listener.ts.
 */
export class DnsServer {
  private zone: DnsAnswerer;
  private readonly options: Required<DnsServerOptions>;
  private readonly stats = emptyCounters();
  private udp: dgram.Socket | undefined;
  private fast: UdpFastPath | undefined;
  private udpMode: DnsUdpPath = { path: 'dgram', reason: 'not listening' };
  private readonly tcp: DnsTcpListener;
  private bound: DnsServerAddress | undefined;

  constructor(zone: DnsAnswerer, options: DnsServerOptions = {}) {
    this.zone = zone;
    this.options = resolveDnsServerOptions(options);
    this.tcp = new DnsTcpListener(
      {
        maxConnections: this.options.maxTcpConnections,
        maxPerSource: this.options.maxTcpConnectionsPerSource,
        idleTimeoutMs: this.options.tcpIdleTimeoutMs,
        idleTimeoutUnderLoadMs: this.options.tcpIdleTimeoutUnderLoadMs,
      },
      this.handle,
      this.stats,
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
    if (this.fast !== undefined) addWorkerCounters(out, this.fast);
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
      const tcpBound = await this.tcp.listen(host, udpPort).then(
        () => true,
        (err: unknown) => {
          lastError = err;
          return false;
        },
      );
      if (!tcpBound) {
        await closeUdp(udp);
        continue;
      }
      if (udp instanceof UdpFastPath) this.fast = udp;
      else this.udp = udp;
      this.bound = { host, port: udpPort };
      return this.bound;
    }
    throw new DnsError('IO_ERROR', `binding the Service DNS server to ${host} port ${port}`, {
      cause: lastError,
    });
  }

  /** Stops listening, closes every TCP connection and waits until both sockets are closed. */
  async close(): Promise<void> {
    const { udp, fast } = this;
    this.udp = undefined;
    this.fast = undefined;
    this.bound = undefined;
    await Promise.all([
      this.tcp.close(),
      udp ? closeUdp(udp) : undefined,
      // The worker's counts stay in the totals once it has stopped counting.
      fast?.close().then(() => addWorkerCounters(this.stats, fast)),
    ]);
  }

  /** Answers one packet from the current zone, counting the outcome; never throws. */
  private readonly handle = (packet: Buffer, transport: DnsTransport): Buffer | undefined => {
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
  };

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
    addWorkerCounters(this.stats, dead);
    this.stats.failed++;
    this.udpMode = { path: 'dgram', reason };
    try {
      this.udp = await this.bindUdp(bound.host, bound.port);
    } catch {
      this.stats.socketErrors++;
    }
  }

  private bindUdp(host: string, port: number): Promise<dgram.Socket> {
    return bindDgram(host, port, this.options.udpReceiveBufferBytes, this.handle, this.stats);
  }
}
