import type { MessagePort } from 'node:worker_threads';
import type { DnsRcodeName, ZoneView } from './dns-zone-types';

// What the DnsServer's thread and the UDP worker thread share. The worker never returns to its
// event loop (it blocks in recvmmsg), so it reads the control words with Atomics and takes
// zones off its port with receiveMessageOnPort; its counters are plain stores into shared
// memory the server's thread reads without a message.

/** Index in the control words: non-zero asks the worker to close its socket and exit. */
export const CONTROL_STOP = 0;
/** Index in the control words: bumped after each zone posted on the zone port. */
export const CONTROL_ZONE_VERSION = 1;
/** Number of Int32 control words. */
export const CONTROL_WORDS = 2;

/** The order of the worker's counters in its Float64Array. */
export const COUNTER_NAMES = [
  'received',
  'NOERROR',
  'FORMERR',
  'SERVFAIL',
  'NXDOMAIN',
  'NOTIMP',
  'REFUSED',
  'BADVERS',
  'truncated',
  'malformed',
  'notQueries',
  'failed',
  'socketErrors',
] as const;

/** One counter's name. */
export type CounterName = (typeof COUNTER_NAMES)[number];

/** Index of a counter in the shared Float64Array. */
export const COUNTER: Readonly<Record<CounterName, number>> = Object.fromEntries(
  COUNTER_NAMES.map((name, i) => [name, i]),
) as Record<CounterName, number>;

/** Index of an rcode's counter. */
export function rcodeCounter(rcode: DnsRcodeName): number {
  return COUNTER[rcode];
}

/** What the worker starts with (its workerData). */
export interface UdpWorkerData {
  /** Marks the data as this worker's, so the bundle's entry knows what to run. */
  podminDnsUdpWorker: true;
  host: string;
  port: number;
  /** SO_RCVBUF and SO_SNDBUF. */
  bufferBytes: number;
  /** Datagrams per recvmmsg and sendmmsg. */
  batch: number;
  /** SO_RCVTIMEO: how long the worker may take to see the stop word. */
  pollMs: number;
  control: SharedArrayBuffer;
  counters: SharedArrayBuffer;
  /** Zones arrive here (one message per zone). */
  zones: MessagePort;
  zone: ZoneView;
}

/** What the worker posts to its parent. */
export type UdpWorkerMessage =
  | { type: 'listening'; port: number }
  /** libc or koffi cannot be used here: the server falls back to dgram. */
  | { type: 'unavailable'; reason: string }
  /** The socket could not be bound (errno name, e.g. EADDRINUSE). */
  | { type: 'bind-error'; code: string; message: string };
