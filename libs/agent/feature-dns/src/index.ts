/** The zone of one snapshot and the answering logic over it. */
export * from './dns-zone';
/** The UDP and TCP listeners, counters and atomic zone swap. */
export * from './dns-server';
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
