import type { DnsRcodeName } from './dns-zone-types';
import type { UdpFastPath } from './udp-fast-path';
import { COUNTER_NAMES, type CounterName } from './udp-protocol';

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

/** Counters at zero. */
export function emptyCounters(): DnsCounters {
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

function isRcode(name: CounterName): name is DnsRcodeName {
  return name.toUpperCase() === name;
}

/** Adds the UDP worker's shared counters to `counters`. */
export function addWorkerCounters(counters: DnsCounters, worker: UdpFastPath): void {
  for (const name of COUNTER_NAMES) {
    const value = worker.counter(name);
    if (isRcode(name)) counters.responses[name] += value;
    else counters[name] += value;
  }
}
