/** The zone the agent is authoritative for. */
export const DNS_ZONE_APEX = 'svc.cluster.local';
/** The EDNS(0) UDP payload size this server advertises and caps clients at (DNS flag day 2020). */
export const DNS_SERVER_UDP_PAYLOAD = 1232;
/** The UDP limit without EDNS, and the floor of an advertised size (RFC 6891 §6.2.5). */
export const DNS_CLASSIC_UDP_PAYLOAD = 512;
/** Name server of the zone, also its SOA MNAME; it has no address records (NODATA). */
export const DNS_ZONE_NS = `ns.${DNS_ZONE_APEX}`;
/** SOA RNAME of the zone (`hostmaster@svc.cluster.local`). */
export const DNS_ZONE_HOSTMASTER = `hostmaster.${DNS_ZONE_APEX}`;

/** How a query arrived; it decides the size limit of the reply. */
export type DnsTransport = 'udp' | 'tcp';

/** One Service identity of the snapshot. */
export interface ZoneService {
  namespace: string;
  name: string;
}

/** What a zone is built from: the snapshot's cluster-wide Service identities. */
export interface ZoneSnapshot {
  cluster: string;
  /** Snapshot generation; becomes the SOA serial (mod 2^32). */
  generation: number;
  services: readonly ZoneService[];
}

/**
 * A zone as plain data (structured-clonable), to hand to a worker thread: the records as
 * `[<name>.<namespace>, VIP]` pairs, already hashed, so rebuilding it costs no SHA-512.
 */
export interface ZoneView {
  cluster: string;
  generation: number;
  ready: boolean;
  records: [key: string, vip: string][];
}

/** Response codes this server sends (BADVERS is the EDNS extended code 16). */
export type DnsRcodeName =
  'NOERROR' | 'FORMERR' | 'SERVFAIL' | 'NXDOMAIN' | 'NOTIMP' | 'REFUSED' | 'BADVERS';

/** The outcome of one packet: a reply to send, or a reason it is dropped silently. */
export type DnsResult =
  | { kind: 'reply'; bytes: Buffer; rcode: DnsRcodeName; truncated: boolean }
  | { kind: 'drop'; reason: 'malformed' | 'response' };
