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
