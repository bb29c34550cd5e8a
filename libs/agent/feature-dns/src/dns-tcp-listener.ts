import net from 'node:net';
import { performance } from 'node:perf_hooks';
import type { PacketHandler } from './dgram-listener';
import type { DnsCounters } from './dns-counters';
import { TcpConnectionTable, type TcpConnectionLimits } from './tcp-connection-table';

/** How often idle TCP connections are looked for, as a fraction of the shorter timeout. */
const IDLE_SWEEPS_PER_TIMEOUT = 4;

/**
 * The TCP side of the DNS server: RFC 7766 framing, connection limits with eviction of the
 * longest idle, idle timeouts, and backpressure on clients that do not read their replies.
 */
export class DnsTcpListener {
  private server: net.Server | undefined;
  private readonly connections: TcpConnectionTable<net.Socket>;
  /** Connections holding the first bytes of a query not yet complete. */
  private readonly midQuery = new Set<net.Socket>();
  private idleSweep: NodeJS.Timeout | undefined;

  constructor(
    private readonly limits: TcpConnectionLimits,
    private readonly handle: PacketHandler,
    private readonly stats: DnsCounters,
  ) {
    // A query in progress: bytes of an incomplete one, or replies the client has not taken yet.
    this.connections = new TcpConnectionTable<net.Socket>(
      limits,
      (socket) => this.midQuery.has(socket) || socket.writableLength > 0,
    );
  }

  /** Listens on `host` and `port`; rejects with the bind error. */
  listen(host: string, port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const server = net.createServer((socket) => this.serveConnection(socket));
      server.once('error', reject);
      server.listen({ host, port, exclusive: true }, () => {
        server.off('error', reject);
        server.on('error', () => {
          this.stats.socketErrors++;
        });
        this.server = server;
        resolve();
      });
    });
  }

  /** Stops listening, closes every connection and waits until the server is closed. */
  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    this.stopIdleSweep();
    for (const socket of this.connections.connections()) {
      this.connections.remove(socket);
      socket.destroy();
    }
    this.midQuery.clear();
    if (server !== undefined) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** RFC 7766 framing: 2-byte length prefix, any number of (pipelined) queries per connection. */
  private serveConnection(socket: net.Socket): void {
    socket.on('error', () => {
      this.stats.socketErrors++;
    });
    if (!this.admit(socket)) return;
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

  /** Enters a new connection into the table, closing those it evicts; false when refused. */
  private admit(socket: net.Socket): boolean {
    // A socket closed before it was handed over has no address: one source for all of them.
    const admission = this.connections.add(socket, socket.remoteAddress ?? '', performance.now());
    if (!admission.admitted) {
      this.stats.tcpRefused++;
      socket.destroy();
      return false;
    }
    for (const evicted of admission.evicted) {
      this.stats.tcpEvicted++;
      this.midQuery.delete(evicted);
      evicted.destroy();
    }
    this.stats.tcpAccepted++;
    this.startIdleSweep();
    return true;
  }

  /** Closes idle connections every fraction of the shorter timeout while any is open. */
  private startIdleSweep(): void {
    if (this.idleSweep !== undefined) return;
    const shorter = Math.min(this.limits.idleTimeoutMs, this.limits.idleTimeoutUnderLoadMs);
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
