/** The zone of one snapshot and the answering logic over it. */
export * from './dns-zone';
/** The zone's constants and the types of its snapshots, views and results. */
export * from './dns-zone-types';
/** Reply encoding with the query's own question bytes, and the UDP size limit. */
export { encodeReply, udpReplyLimit, type ReplyParts } from './dns-reply-encoding';
/** The UDP and TCP listeners, counters and atomic zone swap. */
export * from './dns-server';
/** The server's options, the TCP limits' defaults and the loopback check. */
export {
  DNS_TCP_IDLE_TIMEOUT_MS,
  DNS_TCP_IDLE_TIMEOUT_UNDER_LOAD_MS,
  DNS_TCP_MAX_CONNECTIONS,
  DNS_TCP_MAX_CONNECTIONS_PER_SOURCE,
  isLoopbackAddress,
  type DnsServerOptions,
} from './dns-server-options';
/** What the server has seen since it started. */
export type { DnsCounters } from './dns-counters';
/** The ZoneSource port and its token. */
export * from './dns.ports';
/** The Nest module starting and stopping the server. */
export * from './dns.module';
/** DnsError. */
export * from './dns-error';
/** The coordinator-fed ZoneSource of agent-dns. */
export * from './coordinator-zone-source';
/** The agent-dns process: module, Dns controller and definition. */
export * from './dns.process';
/** The UDP fast path: a worker thread on recvmmsg/sendmmsg, and its bundle's name. */
export * from './udp-fast-path';
