import { isMainThread, parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import koffi from 'koffi';
import { DnsZone } from './dns-zone';
import type { ZoneView } from './dns-zone-types';
import {
  CONTROL_STOP,
  CONTROL_ZONE_VERSION,
  COUNTER,
  rcodeCounter,
  type UdpWorkerData,
  type UdpWorkerMessage,
} from './udp-protocol';

// The UDP fast path's worker thread (its own bundle, agent-dns-udp.cjs): one socket opened
// through libc, read with blocking recvmmsg and answered with one sendmmsg per batch. Node's
// dgram path costs one callback, one Buffer and one send per datagram in the process's main
// event loop, which also runs gRPC, the coordinator long poll and the main heap's collections
// (Mark-Compacts of 8–22 ms measured): near one core's saturation its p99 was 12–20 ms. Here
// the loop owns a thread, its heap holds one zone and little else, and the datagrams live in
// one native block allocated once.
// Measured with bench/dns.mjs (2 vCPUs shared with other builds, load average 16–19, 3
// alternating rounds, half of agent-dns's maximum rate, 13.6k q/s): p50 0.089 ms against
// dgram's 1.74 (NSD 0.076), p99 17.2 ms against 19.3 with the leader idle and 25.7 against 31.1
// while it recomputes (NSD's own p99 was 13.9 ms: at that load the tail is the scheduler's).
// In a two-process echo test at load 15 (10k q/s) a recvmmsg worker had p99 1.3–4.6 ms, a bare
// dgram echo 27–109 ms. The cost: RSS +13–14 MiB (84.0 against 70.6 idle), of which an empty
// worker thread is about 10 MiB and koffi with libc about 3.5.

// Linux constants, equal on x86_64 and arm64 (the node architectures).
const AF_INET = 2;
const AF_INET6 = 10;
const SOCK_DGRAM = 2;
const SOCK_CLOEXEC = 0o2000000;
const SOL_SOCKET = 1;
const SO_SNDBUF = 7;
const SO_RCVBUF = 8;
const SO_RCVTIMEO = 20;
const MSG_WAITFORONE = 0x10000;
const EINTR = 4;
const ERROR_BACKOFF_MS = 10;
const EAGAIN = 11;
const ERRNO_NAMES: Readonly<Record<number, string>> = {
  13: 'EACCES',
  98: 'EADDRINUSE',
  99: 'EADDRNOTAVAIL',
};

// struct mmsghdr on LP64: msghdr (56 bytes) then msg_len, padded to 64.
const MMSGHDR = 64;
const IOVEC = 16;
const OFF_NAME = 0;
const OFF_NAMELEN = 8;
const OFF_IOV = 16;
const OFF_IOVLEN = 24;
const OFF_MSGLEN = 56;
/** sockaddr_in6 is 28 bytes (sockaddr_in 16); 32 keeps each slot aligned. */
const NAME = 32;
const NAME_CAPACITY = 28;
/** The largest UDP payload (65,507) fits, so no datagram is ever cut short. */
const RX_SLOT = 65536;
/** UDP replies never exceed 1232 bytes (DNS_SERVER_UDP_PAYLOAD); a larger one is a failure. */
const TX_SLOT = 2048;
const TWO_32 = 2 ** 32;

interface Libc {
  socket(domain: number, type: number, protocol: number): number;
  bind(fd: number, addr: Buffer, len: number): number;
  setsockopt(fd: number, level: number, name: number, value: Buffer, len: number): number;
  getsockname(fd: number, addr: Buffer, len: Buffer): number;
  recvmmsg(fd: number, vec: unknown, vlen: number, flags: number, timeout: null): number;
  sendmmsg(fd: number, vec: unknown, vlen: number, flags: number): number;
  close(fd: number): number;
  malloc(size: number): unknown;
  free(ptr: unknown): void;
  inetPton(family: number, text: string, out: Buffer): number;
  strerror(errno: number): string;
}

function bindLibc(): Libc {
  const lib = koffi.load('libc.so.6');
  return {
    socket: lib.func('int socket(int domain, int type, int protocol)'),
    bind: lib.func('int bind(int fd, const void *addr, uint32_t len)'),
    setsockopt: lib.func(
      'int setsockopt(int fd, int level, int name, const void *value, uint32_t len)',
    ),
    getsockname: lib.func('int getsockname(int fd, _Out_ uint8_t *addr, _Inout_ uint8_t *len)'),
    recvmmsg: lib.func(
      'int recvmmsg(int fd, void *vec, unsigned int vlen, int flags, void *timeout)',
    ),
    sendmmsg: lib.func('int sendmmsg(int fd, void *vec, unsigned int vlen, int flags)'),
    close: lib.func('int close(int fd)'),
    malloc: lib.func('void *malloc(size_t size)'),
    free: lib.func('void free(void *ptr)'),
    inetPton: lib.func('int inet_pton(int family, const char *text, _Out_ uint8_t *out)'),
    strerror: lib.func('const char *strerror(int errno)'),
  };
}

function post(message: UdpWorkerMessage): void {
  parentPort?.postMessage(message);
}

function bump(counters: Float64Array, index: number): void {
  counters[index] = (counters[index] ?? 0) + 1;
}

function writePointer(buf: Buffer, offset: number, address: number): void {
  buf.writeUInt32LE(address % TWO_32, offset);
  buf.writeUInt32LE(Math.floor(address / TWO_32), offset + 4);
}

/** Opens and binds the socket; posts why not and returns undefined on failure. */
function openSocket(libc: Libc, data: UdpWorkerData): number | undefined {
  const v6 = data.host.includes(':');
  const family = v6 ? AF_INET6 : AF_INET;
  const address = Buffer.alloc(v6 ? 28 : 16);
  address.writeUInt16LE(family, 0);
  address.writeUInt16BE(data.port, 2);
  const addressBytes = Buffer.alloc(16);
  if (libc.inetPton(family, data.host, addressBytes) !== 1) {
    post({ type: 'bind-error', code: 'EINVAL', message: `${data.host} is not an address` });
    return undefined;
  }
  addressBytes.copy(address, v6 ? 8 : 4, 0, v6 ? 16 : 4);
  const fd = libc.socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    post({ type: 'unavailable', reason: `socket(): ${libc.strerror(koffi.errno())}` });
    return undefined;
  }
  const size = Buffer.alloc(4);
  size.writeInt32LE(data.bufferBytes);
  // Capped by net.core.rmem_max and wmem_max, as dgram's recvBufferSize is.
  libc.setsockopt(fd, SOL_SOCKET, SO_RCVBUF, size, 4);
  libc.setsockopt(fd, SOL_SOCKET, SO_SNDBUF, size, 4);
  const timeout = Buffer.alloc(16);
  timeout.writeBigInt64LE(BigInt(Math.floor(data.pollMs / 1000)), 0);
  timeout.writeBigInt64LE(BigInt((data.pollMs % 1000) * 1000), 8);
  libc.setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, timeout, 16);
  if (libc.bind(fd, address, address.length) !== 0) {
    const errno = koffi.errno();
    libc.close(fd);
    post({
      type: 'bind-error',
      code: ERRNO_NAMES[errno] ?? `errno ${errno}`,
      message: `bind ${data.host} port ${data.port}: ${libc.strerror(errno)}`,
    });
    return undefined;
  }
  const bound = Buffer.alloc(28);
  const length = Buffer.alloc(4);
  length.writeUInt32LE(bound.length);
  if (libc.getsockname(fd, bound, length) !== 0) {
    libc.close(fd);
    post({ type: 'unavailable', reason: `getsockname(): ${libc.strerror(koffi.errno())}` });
    return undefined;
  }
  post({ type: 'listening', port: bound.readUInt16BE(2) });
  return fd;
}

/** One thread's native memory: receive and send header arrays, each at the start of a block. */
interface Buffers {
  batch: number;
  rxBlock: unknown;
  rx: Buffer;
  txBlock: unknown;
  tx: Buffer;
  /** Offsets in `rx`: iovecs, peer names, datagram slots. */
  rxIovs: number;
  names: number;
  rxSlots: number;
  /** Offsets in `tx`: iovecs, reply slots. */
  txIovs: number;
  txSlots: number;
  /** Peer name address of each receive slot, as the two 32-bit halves a header stores. */
  nameLow: Uint32Array;
  nameHigh: Uint32Array;
  /** Address of each send iovec, likewise (a partial send moves headers, so each is rewritten). */
  iovLow: Uint32Array;
  iovHigh: Uint32Array;
}

function allocate(libc: Libc, batch: number): Buffers {
  // Receive slots are large, but the kernel only touches the pages it writes.
  const rxIovs = batch * MMSGHDR;
  const names = rxIovs + batch * IOVEC;
  const rxSlots = Math.ceil((names + batch * NAME) / 4096) * 4096;
  const rxTotal = rxSlots + batch * RX_SLOT;
  const txIovs = batch * MMSGHDR;
  const txSlots = Math.ceil((txIovs + batch * IOVEC) / 64) * 64;
  const txTotal = txSlots + batch * TX_SLOT;
  const rxBlock = libc.malloc(rxTotal);
  const txBlock = libc.malloc(txTotal);
  if (rxBlock === null || txBlock === null) {
    if (rxBlock !== null) libc.free(rxBlock);
    if (txBlock !== null) libc.free(txBlock);
    throw new Error(`malloc of ${rxTotal + txTotal} bytes failed`);
  }
  const rxBase = Number(koffi.address(rxBlock));
  const txBase = Number(koffi.address(txBlock));
  const rx = Buffer.from(koffi.view(rxBlock, rxTotal));
  const tx = Buffer.from(koffi.view(txBlock, txTotal));
  rx.fill(0, 0, rxSlots);
  tx.fill(0, 0, txSlots);
  const nameLow = new Uint32Array(batch);
  const nameHigh = new Uint32Array(batch);
  const iovLow = new Uint32Array(batch);
  const iovHigh = new Uint32Array(batch);
  for (let i = 0; i < batch; i++) {
    const name = rxBase + names + i * NAME;
    nameLow[i] = name % TWO_32;
    nameHigh[i] = Math.floor(name / TWO_32);
    const recv = i * MMSGHDR;
    writePointer(rx, recv + OFF_NAME, name);
    rx.writeUInt32LE(NAME_CAPACITY, recv + OFF_NAMELEN);
    writePointer(rx, recv + OFF_IOV, rxBase + rxIovs + i * IOVEC);
    rx.writeUInt32LE(1, recv + OFF_IOVLEN);
    writePointer(rx, rxIovs + i * IOVEC, rxBase + rxSlots + i * RX_SLOT);
    rx.writeUInt32LE(RX_SLOT, rxIovs + i * IOVEC + 8);
    const send = i * MMSGHDR;
    const iov = txBase + txIovs + i * IOVEC;
    iovLow[i] = iov % TWO_32;
    iovHigh[i] = Math.floor(iov / TWO_32);
    tx.writeUInt32LE(1, send + OFF_IOVLEN);
    writePointer(tx, txIovs + i * IOVEC, txBase + txSlots + i * TX_SLOT);
  }
  return {
    batch,
    rxBlock,
    rx,
    txBlock,
    tx,
    rxIovs,
    names,
    rxSlots,
    txIovs,
    txSlots,
    nameLow,
    nameHigh,
    iovLow,
    iovHigh,
  };
}

/** Serves the socket until the stop word is set; the socket is closed on every way out. */
export function runUdpWorker(data: UdpWorkerData): void {
  let libc: Libc;
  try {
    libc = bindLibc();
  } catch (err) {
    post({ type: 'unavailable', reason: err instanceof Error ? err.message : String(err) });
    return;
  }
  const fd = openSocket(libc, data);
  if (fd === undefined) return;
  let buffers: Buffers | undefined;
  try {
    buffers = allocate(libc, data.batch);
    serve(libc, fd, data, buffers);
  } finally {
    libc.close(fd);
    if (buffers !== undefined) {
      libc.free(buffers.rxBlock);
      libc.free(buffers.txBlock);
    }
  }
}

function serve(libc: Libc, fd: number, data: UdpWorkerData, b: Buffers): void {
  const control = new Int32Array(data.control);
  const counters = new Float64Array(data.counters);
  const { rx, tx } = b;
  let zone = DnsZone.fromView(data.zone);
  // The zone in workerData is version 0. Not a fresh read of the counter: a zone posted
  // between 'listening' and this line would then count as applied and never be read.
  let zoneVersion = 0;
  for (;;) {
    if (Atomics.load(control, CONTROL_STOP) !== 0) return;
    // Blocks until one datagram is there (or SO_RCVTIMEO passes), then takes what else is.
    const received = libc.recvmmsg(fd, b.rxBlock, b.batch, MSG_WAITFORONE, null);
    if (received < 0) {
      const errno = koffi.errno();
      if (errno !== EAGAIN && errno !== EINTR) {
        bump(counters, COUNTER.socketErrors);
        // A persistent error would otherwise spin a core; close() wakes this wait.
        Atomics.wait(control, CONTROL_STOP, 0, ERROR_BACKOFF_MS);
      }
      continue;
    }
    // Checked after the wait, not before it: a zone replaced while this thread was blocked
    // answers the datagrams that woke it (replaceZone holds from the next packet on).
    const version = Atomics.load(control, CONTROL_ZONE_VERSION);
    if (version !== zoneVersion) {
      // Only the newest zone matters; the ones before it were superseded while posted.
      let view: ZoneView | undefined;
      for (let m = receiveMessageOnPort(data.zones); m !== undefined;) {
        view = m.message as ZoneView;
        m = receiveMessageOnPort(data.zones);
      }
      if (view !== undefined) {
        zone = DnsZone.fromView(view);
        zoneVersion = version;
      }
    }
    let replies = 0;
    for (let i = 0; i < received; i++) {
      const header = i * MMSGHDR;
      const length = rx.readUInt32LE(header + OFF_MSGLEN);
      const nameLength = rx.readUInt32LE(header + OFF_NAMELEN);
      // recvmmsg wrote the peer's length over the capacity: the next call needs it back.
      rx.writeUInt32LE(NAME_CAPACITY, header + OFF_NAMELEN);
      bump(counters, COUNTER.received);
      const slot = b.rxSlots + i * RX_SLOT;
      let reply: Buffer;
      try {
        const result = zone.resolve(rx.subarray(slot, slot + length), 'udp');
        if (result.kind === 'drop') {
          bump(counters, result.reason === 'malformed' ? COUNTER.malformed : COUNTER.notQueries);
          continue;
        }
        if (result.bytes.length > TX_SLOT) throw new Error('a UDP reply larger than its slot');
        bump(counters, rcodeCounter(result.rcode));
        if (result.truncated) bump(counters, COUNTER.truncated);
        reply = result.bytes;
      } catch {
        bump(counters, COUNTER.failed);
        continue;
      }
      const send = replies * MMSGHDR;
      reply.copy(tx, b.txSlots + replies * TX_SLOT);
      tx.writeUInt32LE(b.nameLow[i] ?? 0, send + OFF_NAME);
      tx.writeUInt32LE(b.nameHigh[i] ?? 0, send + OFF_NAME + 4);
      tx.writeUInt32LE(nameLength, send + OFF_NAMELEN);
      tx.writeUInt32LE(b.iovLow[replies] ?? 0, send + OFF_IOV);
      tx.writeUInt32LE(b.iovHigh[replies] ?? 0, send + OFF_IOV + 4);
      tx.writeUInt32LE(reply.length, b.txIovs + replies * IOVEC + 8);
      replies++;
    }
    sendAll(libc, fd, b, replies, counters);
  }
}

/**
 * Sends the first `count` prepared headers. sendmmsg stops at the first datagram that fails
 * (-1 when it is the first): that one is counted and skipped, and the headers after it move to
 * the front (their iovecs point at their own reply slots, which stay where they are).
 */
function sendAll(libc: Libc, fd: number, b: Buffers, count: number, counters: Float64Array): void {
  let left = count;
  while (left > 0) {
    const sent = libc.sendmmsg(fd, b.txBlock, left, 0);
    const done = sent < 0 ? 1 : sent;
    if (sent < 0) bump(counters, COUNTER.socketErrors);
    left -= done;
    if (left > 0) b.tx.copyWithin(0, done * MMSGHDR, (done + left) * MMSGHDR);
  }
}

if (!isMainThread && (workerData as Partial<UdpWorkerData> | null)?.podminDnsUdpWorker === true) {
  runUdpWorker(workerData as UdpWorkerData);
}
