// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
// podmin's Service VIP dataplane: one TCX ingress program attached to the Pod host-side veths,
// the Pod ENI and the lowest-metric IPv6 default-route interface.
//
// Forward path (a packet to a Service VIP): pick a ready backend for the flow, source-NAT to the
// node address with a port in 30000-32767, remember the flow both ways, and redirect to the
// backend's route. Reverse path (a reply to a port this node allocated): restore the VIP tuple
// and redirect to the client's route. Everything else passes untouched (TCX_NEXT).
//
// Only an immediate TCP or UDP header is parsed: a fragment or any extension header on a packet
// to a VIP is dropped. A VIP port with no ready backend fails closed by answering: a TCP reset,
// or ICMPv6 port unreachable for UDP, so connect() and connected UDP sockets fail at once
// (ECONNREFUSED) instead of retrying into silence.
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/ipv6.h>
#include <linux/pkt_cls.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

// TCX verdicts (linux/bpf.h of kernels >= 6.6; the build's headers may predate them).
#define PODMIN_TCX_NEXT -1
#define PODMIN_TCX_PASS 0
#define PODMIN_TCX_DROP 2
#define PODMIN_TCX_REDIRECT 7

#define SNAT_PORT_MIN 30000
#define SNAT_PORT_COUNT 2768 // 30000-32767
#define SNAT_PROBES 32
#define NSEC_PER_SEC 1000000000ULL
// A reverse entry may be taken over by a new flow once its flow is closed by FINs both ways
// for this long, or idle for the protocol's timeout (see reusable()).
#define CLOSED_REUSE_NS (1 * NSEC_PER_SEC)
// After a reset, long enough for the reset itself to reach the backend before a new SYN on the
// same tuple can (packets of two flows may be processed on different CPUs).
#define RST_REUSE_NS (100 * 1000 * 1000ULL)
#define TCP_IDLE_NS (600 * NSEC_PER_SEC)
#define UDP_IDLE_NS (30 * NSEC_PER_SEC)
// A flow's last-seen time is rewritten at most this often by packets that change nothing else:
// every packet writing it made both directions' CPUs fight over the entry's cache line. The
// reuse delays above are 10 to 60,000 times longer; FIN and reset packets stamp it exactly.
#define SEEN_GRANULE_NS (10 * 1000 * 1000ULL)
// The program's clock: CLOCK_MONOTONIC as of the last timer tick (at most 1/HZ behind, a few
// ms), read without the TSC: every interval above is at least 10 ms and none needs better, and
// the precise clock's helper cost 15-20 ns of a known flow's packet.
#define now_ns() bpf_ktime_get_coarse_ns()
// How long a flow keeps the route (egress interface and MAC addresses) its first packet looked
// up before looking it up again: a route change reaches existing flows within this.
#define ROUTE_TTL_MS 1000

#define FLOW_FIN_FWD 1
#define FLOW_FIN_REV 2
#define FLOW_RST 4

#define ICMPV6_DEST_UNREACH 1
#define ICMPV6_PORT_UNREACH 4
#define NEXTHDR_ICMPV6 58

// Keep in step with libs/agent/feature-dataplane/src/maps/layout.ts.
struct config {
  struct in6_addr node_addr;
  __u32 flags; // bit 0: node_addr is set
  __u32 pad;
};

struct svc_key {
  struct in6_addr vip;
  __u16 port; // network byte order
  __u8 proto;
  __u8 pad;
};

struct svc_val {
  __u32 id;    // service id: the backends map's key prefix
  __u32 count; // ready backends in slots 0..count-1; 0 fails closed
};

struct backend_key {
  __u32 id;
  __u32 slot;
};

struct backend_val {
  struct in6_addr addr;
  __u16 port; // network byte order
  __u16 pad;
};

struct flow_key {
  struct in6_addr saddr;
  struct in6_addr daddr;
  __u16 sport;
  __u16 dport;
  __u8 proto;
  __u8 pad[3];
};

// A flow direction's cached route: what bpf_fib_lookup answered, and when (ms, wrapping).
struct route {
  __u32 ifindex; // 0: none yet
  __u8 macs[12]; // destination, then source: the Ethernet header's first 12 bytes
  __u32 at_ms;
};

struct fwd_val {
  struct in6_addr baddr;
  __u16 bport;
  __u16 nport; // the SNAT port, network byte order
  struct route route; // to the backend
};

struct rev_val {
  struct in6_addr caddr;
  struct in6_addr vip;
  __u16 cport;
  __u16 vport;
  __u32 flags;
  __u64 seen_ns;
  struct route route; // to the client
  __u32 pad;
};

enum stat {
  STAT_FORWARD = 0,
  STAT_REVERSE = 1,
  STAT_NEW_FLOW = 2,
  STAT_REJECT = 3,
  STAT_DROP_UNPARSED = 4,
  STAT_SNAT_EXHAUSTED = 5,
  STAT_PORT_REUSED = 6,
  STAT_COUNT = 8,
};

// A map definition: libbpf reads its type, size and key and value types from this struct's BTF.
#define PODMIN_MAP(map_type, entries, key_type, value_type)                                        \
  struct {                                                                                         \
    __uint(type, map_type);                                                                        \
    __uint(max_entries, entries);                                                                  \
    __type(key, key_type);                                                                         \
    __type(value, value_type);                                                                     \
  }

PODMIN_MAP(BPF_MAP_TYPE_ARRAY, 1, __u32, struct config) podmin_config SEC(".maps");
PODMIN_MAP(BPF_MAP_TYPE_HASH, 65536, struct in6_addr, __u32) podmin_vips SEC(".maps");
PODMIN_MAP(BPF_MAP_TYPE_HASH, 65536, struct svc_key, struct svc_val) podmin_services SEC(".maps");
PODMIN_MAP(BPF_MAP_TYPE_HASH, 65536, struct backend_key, struct backend_val)
    podmin_backends SEC(".maps");
PODMIN_MAP(BPF_MAP_TYPE_LRU_HASH, 262144, struct flow_key, struct fwd_val)
    podmin_fwd_flows SEC(".maps");
PODMIN_MAP(BPF_MAP_TYPE_LRU_HASH, 262144, struct flow_key, struct rev_val)
    podmin_rev_flows SEC(".maps");
PODMIN_MAP(BPF_MAP_TYPE_PERCPU_ARRAY, STAT_COUNT, __u32, __u64) podmin_stats SEC(".maps");

static __always_inline void count(__u32 which) {
  __u64 *n = bpf_map_lookup_elem(&podmin_stats, &which);
  if (n)
    *n += 1;
}

// A stable mix of the flow tuple: the same flow always picks the same slot and first port.
static __always_inline __u32 flow_hash(const struct flow_key *k, __u32 seed) {
  const __u32 *w = (const __u32 *)k;
  __u32 h = 2166136261u ^ seed;
#pragma unroll
  for (int i = 0; i < 10; i++) {
    h ^= w[i];
    h *= 16777619u;
    h ^= h >> 15;
  }
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  return h;
}

static __always_inline int same_addr(const struct in6_addr *a, const struct in6_addr *b) {
  return a->in6_u.u6_addr32[0] == b->in6_u.u6_addr32[0] &&
         a->in6_u.u6_addr32[1] == b->in6_u.u6_addr32[1] &&
         a->in6_u.u6_addr32[2] == b->in6_u.u6_addr32[2] &&
         a->in6_u.u6_addr32[3] == b->in6_u.u6_addr32[3];
}

struct pkt {
  struct flow_key key; // the packet's own tuple
  __u32 l4_off;
  __u32 csum_off;
  __u8 tcp_flags; // FIN 1, SYN 2, RST 4 (TCP only)
};

// Reads the immediate TCP/UDP header after the IPv6 header; 0 when it is not one.
static __always_inline int parse_l4(struct __sk_buff *skb, struct ipv6hdr *ip6, struct pkt *p) {
  void *data = (void *)(long)skb->data;
  void *data_end = (void *)(long)skb->data_end;
  p->l4_off = sizeof(struct ethhdr) + sizeof(struct ipv6hdr);
  __builtin_memcpy(&p->key.saddr, &ip6->saddr, 16);
  __builtin_memcpy(&p->key.daddr, &ip6->daddr, 16);
  p->key.proto = ip6->nexthdr;
  p->key.pad[0] = p->key.pad[1] = p->key.pad[2] = 0;
  p->tcp_flags = 0;
  if (ip6->nexthdr != IPPROTO_TCP && ip6->nexthdr != IPPROTO_UDP)
    return 0;
  // Both headers begin with the source and destination ports; UDP's is 8 bytes, TCP's 20.
  struct udphdr *uh = data + p->l4_off;
  if ((void *)(uh + 1) > data_end)
    return 0;
  p->key.sport = uh->source;
  p->key.dport = uh->dest;
  if (ip6->nexthdr == IPPROTO_UDP) {
    p->csum_off = p->l4_off + offsetof(struct udphdr, check);
    return 1;
  }
  struct tcphdr *th = data + p->l4_off;
  if ((void *)(th + 1) > data_end)
    return 0;
  p->csum_off = p->l4_off + offsetof(struct tcphdr, check);
  p->tcp_flags = (th->fin ? 1 : 0) | (th->syn && !th->ack ? 2 : 0) | (th->rst ? 4 : 0);
  return 1;
}

// The addresses and ports of a rewritten packet: the IPv6 header's last 32 bytes and the first
// four of the TCP or UDP header that follows at once, so one store writes them all.
struct tuple {
  struct in6_addr saddr;
  struct in6_addr daddr;
  __u16 sport;
  __u16 dport;
};

// The ones' complement sum of replacing `n` 32-bit words `from` with `to` (what bpf_csum_diff
// answers, computed here: a helper call costs more than the sum).
static __always_inline __u32 csum_words_diff(const __u32 *from, const __u32 *to, int n) {
  __u64 sum = 0;
#pragma unroll
  for (int i = 0; i < n; i++)
    sum += (__u32)~from[i] + (__u64)to[i];
  sum = (sum & 0xffffffff) + (sum >> 32);
  sum = (sum & 0xffffffff) + (sum >> 32);
  return (__u32)sum;
}

// Rewrites both addresses and ports, fixing the L4 checksum (IPv6 has no header checksum). The
// addresses are in the pseudo-header, the ports are not: a checksum the sender left for the
// device to finish (CHECKSUM_PARTIAL) covers only the former, so they are fixed apart, by the
// kernel's helpers, which alone know how the skb's checksum stands. The new tuple itself is
// written straight into the packet: one store, not a helper call.
static __always_inline int rewrite(struct __sk_buff *skb, const struct pkt *p,
                                   const struct in6_addr *saddr, __u16 sport,
                                   const struct in6_addr *daddr, __u16 dport) {
  struct tuple t;
  __builtin_memcpy(&t.saddr, saddr, 16);
  __builtin_memcpy(&t.daddr, daddr, 16);
  t.sport = sport;
  t.dport = dport;
  __u64 mangled = p->key.proto == IPPROTO_UDP ? BPF_F_MARK_MANGLED_0 : 0;
  __u32 diff = csum_words_diff((const __u32 *)&p->key.saddr, (const __u32 *)&t, 8);
  __u32 old_ports = (__u32)p->key.sport | ((__u32)p->key.dport << 16);
  __u32 new_ports = (__u32)sport | ((__u32)dport << 16);
  if (bpf_l4_csum_replace(skb, p->csum_off, 0, diff, BPF_F_PSEUDO_HDR | mangled) < 0 ||
      bpf_l4_csum_replace(skb, p->csum_off, old_ports, new_ports, 4 | mangled) < 0)
    return -1;
  // The helpers may have moved the packet: its bounds are checked again before the store.
  void *data = (void *)(long)skb->data;
  void *data_end = (void *)(long)skb->data_end;
  struct tuple *at = data + sizeof(struct ethhdr) + offsetof(struct ipv6hdr, saddr);
  if ((void *)(at + 1) > data_end)
    return -1;
  __builtin_memcpy(at, &t, sizeof(t));
  return 0;
}

// Writes the route's destination and source MAC addresses into the Ethernet header.
static __always_inline int set_macs(struct __sk_buff *skb, const __u8 *macs) {
  void *data = (void *)(long)skb->data;
  void *data_end = (void *)(long)skb->data_end;
  if (data + 12 > data_end)
    return -1;
  __builtin_memcpy(data, macs, 12);
  return 0;
}

// Sends the rewritten packet out of the interface that routes its new destination, through the
// flow's cached route while it is younger than ROUTE_TTL_MS, else through a FIB lookup that
// refreshes the cache. (Two CPUs refreshing one flow's cache at once write the same answer.)
static __always_inline int forward(struct __sk_buff *skb, const struct in6_addr *saddr,
                                   const struct in6_addr *daddr, struct route *cache,
                                   __u64 now) {
  __u32 now_ms = (__u32)(now / 1000000);
  if (cache->ifindex != 0 && now_ms - cache->at_ms < ROUTE_TTL_MS) {
    if (set_macs(skb, cache->macs) < 0)
      return PODMIN_TCX_DROP;
    return bpf_redirect(cache->ifindex, 0);
  }
  struct bpf_fib_lookup fib = {};
  fib.family = 10; // AF_INET6
  fib.ifindex = skb->ifindex;
  __builtin_memcpy(fib.ipv6_src, saddr, 16);
  __builtin_memcpy(fib.ipv6_dst, daddr, 16);
  long rc = bpf_fib_lookup(skb, &fib, sizeof(fib), 0);
  if (rc == BPF_FIB_LKUP_RET_SUCCESS) {
    __u8 macs[12];
    __builtin_memcpy(macs, fib.dmac, 6);
    __builtin_memcpy(macs + 6, fib.smac, 6);
    if (set_macs(skb, macs) < 0)
      return PODMIN_TCX_DROP;
    __builtin_memcpy(cache->macs, macs, 12);
    cache->ifindex = fib.ifindex;
    cache->at_ms = now_ms;
    return bpf_redirect(fib.ifindex, 0);
  }
  cache->ifindex = 0;
  if (rc == BPF_FIB_LKUP_RET_NO_NEIGH)
    return bpf_redirect_neigh(fib.ifindex, 0, 0, 0);
  // Anything else (no route, forwarding off): let the stack decide, with the rewrite done.
  return PODMIN_TCX_PASS;
}

struct icmp6_reply {
  // Pseudo-header for the checksum, then the message itself.
  struct in6_addr src;
  struct in6_addr dst;
  __be32 len;
  __be32 next;
  __u8 type;
  __u8 code;
  __u16 csum;
  __u32 unused;
  __u8 quote[48]; // the offending IPv6 header and its first 8 payload bytes
};

struct tcp_reset {
  // Pseudo-header for the checksum, then the TCP header itself.
  struct in6_addr src;
  struct in6_addr dst;
  __be32 len;
  __be32 next;
  struct tcphdr th;
};

// The Internet checksum of `len` bytes at `buf` (a pseudo-header and its message), into `*out`.
static __always_inline int internet_checksum(void *buf, __u32 len, __u16 *out) {
  __s64 sum = bpf_csum_diff(0, 0, (__be32 *)buf, len, 0);
  if (sum < 0)
    return -1;
  __u32 s = (__u32)sum;
  s = (s & 0xffff) + (s >> 16);
  s = (s & 0xffff) + (s >> 16);
  *out = (__u16)~s;
  return 0;
}

// Replaces the packet with `msg` (`len` bytes, IPv6 next header `next`) from `src` to `dst`,
// its Ethernet addresses swapped, and sends it back out of the interface it came in on.
static __always_inline int answer(struct __sk_buff *skb, struct ethhdr *eth,
                                  const struct in6_addr *src, const struct in6_addr *dst,
                                  __u8 next, void *msg, __u32 len) {
  __u8 mac[6];
  __builtin_memcpy(mac, eth->h_dest, 6);
  __builtin_memcpy(eth->h_dest, eth->h_source, 6);
  __builtin_memcpy(eth->h_source, mac, 6);
  struct ipv6hdr ip6 = {};
  ip6.version = 6;
  ip6.payload_len = bpf_htons(len);
  ip6.nexthdr = next;
  ip6.hop_limit = 64;
  __builtin_memcpy(&ip6.saddr, src, 16);
  __builtin_memcpy(&ip6.daddr, dst, 16);
  if (bpf_skb_change_tail(skb, sizeof(*eth) + sizeof(ip6) + len, 0) < 0)
    return PODMIN_TCX_DROP;
  if (bpf_skb_store_bytes(skb, 0, eth, sizeof(*eth), 0) < 0 ||
      bpf_skb_store_bytes(skb, sizeof(*eth), &ip6, sizeof(ip6), 0) < 0 ||
      bpf_skb_store_bytes(skb, sizeof(*eth) + sizeof(ip6), msg, len, 0) < 0)
    return PODMIN_TCX_DROP;
  count(STAT_REJECT);
  return bpf_redirect(skb->ifindex, 0);
}

// Answers a TCP segment with a reset (RFC 9293 §3.10.7.1), built in place of it. A reset, not
// an ICMPv6 error, because Linux defers an ICMP error that arrives while connect() still holds
// the socket, so the client would wait for its first SYN retransmission (1 s).
static __always_inline int reject_tcp(struct __sk_buff *skb, const struct pkt *p) {
  struct ethhdr eth;
  struct ipv6hdr in6;
  struct tcphdr in;
  if (bpf_skb_load_bytes(skb, 0, &eth, sizeof(eth)) < 0 ||
      bpf_skb_load_bytes(skb, sizeof(eth), &in6, sizeof(in6)) < 0 ||
      bpf_skb_load_bytes(skb, p->l4_off, &in, sizeof(in)) < 0)
    return PODMIN_TCX_DROP;
  if (in.rst)
    return PODMIN_TCX_DROP;
  struct tcp_reset r = {};
  __builtin_memcpy(&r.src, &p->key.daddr, 16);
  __builtin_memcpy(&r.dst, &p->key.saddr, 16);
  r.len = bpf_htonl(sizeof(struct tcphdr));
  r.next = bpf_htonl(IPPROTO_TCP);
  r.th.source = in.dest;
  r.th.dest = in.source;
  r.th.doff = sizeof(struct tcphdr) / 4;
  r.th.rst = 1;
  if (in.ack) {
    r.th.seq = in.ack_seq;
  } else {
    __u32 seg_len = bpf_ntohs(in6.payload_len) - in.doff * 4 + in.syn + in.fin;
    r.th.ack = 1;
    r.th.ack_seq = bpf_htonl(bpf_ntohl(in.seq) + seg_len);
  }
  if (internet_checksum(&r, sizeof(r), &r.th.check) < 0)
    return PODMIN_TCX_DROP;
  return answer(skb, &eth, &r.src, &r.dst, IPPROTO_TCP, &r.th, sizeof(r.th));
}

// Answers a UDP datagram with ICMPv6 port unreachable, built in place of it: a connected
// socket then fails with ECONNREFUSED.
static __always_inline int reject_udp(struct __sk_buff *skb, const struct pkt *p) {
  struct ethhdr eth;
  struct icmp6_reply r = {};
  if (bpf_skb_load_bytes(skb, 0, &eth, sizeof(eth)) < 0 ||
      bpf_skb_load_bytes(skb, sizeof(struct ethhdr), r.quote, sizeof(r.quote)) < 0)
    return PODMIN_TCX_DROP;
  __builtin_memcpy(&r.src, &p->key.daddr, 16);
  __builtin_memcpy(&r.dst, &p->key.saddr, 16);
  __u32 msg_len = 8 + sizeof(r.quote);
  r.len = bpf_htonl(msg_len);
  r.next = bpf_htonl(NEXTHDR_ICMPV6);
  r.type = ICMPV6_DEST_UNREACH;
  r.code = ICMPV6_PORT_UNREACH;
  if (internet_checksum(&r, sizeof(r), &r.csum) < 0)
    return PODMIN_TCX_DROP;
  return answer(skb, &eth, &r.src, &r.dst, NEXTHDR_ICMPV6, &r.type, msg_len);
}

// Fails a packet to a VIP port with no ready backend closed, answering so the client fails fast.
static __always_inline int reject(struct __sk_buff *skb, const struct pkt *p) {
  if (p->key.proto == IPPROTO_TCP)
    return reject_tcp(skb, p);
  return reject_udp(skb, p);
}

// Whether a reverse entry's port may be handed to a new flow: 100 ms after a reset (no side
// keeps state for the tuple), 1 s after FINs both ways (the final ACK is in flight; the side
// that closed first keeps TIME_WAIT, which Linux lets a newer SYN take over), or when idle for
// the protocol's timeout. `now` is read when this packet's processing began, so another CPU may
// have stamped the entry later than that: such an entry is in use, not idle for 2^64 - 1 ns.
static __always_inline int reusable(__u32 flags, __u64 seen_ns, __u8 proto, __u64 now) {
  if (seen_ns >= now)
    return 0;
  __u64 idle = now - seen_ns;
  if ((flags & FLOW_RST) && idle > RST_REUSE_NS)
    return 1;
  if ((flags & (FLOW_FIN_FWD | FLOW_FIN_REV)) == (FLOW_FIN_FWD | FLOW_FIN_REV) &&
      idle > CLOSED_REUSE_NS)
    return 1;
  return idle > (proto == IPPROTO_TCP ? TCP_IDLE_NS : UDP_IDLE_NS);
}

/** The key a backend's replies to a SNAT port carry: backend → node address, that port. */
static __always_inline void rev_key(struct flow_key *rk, const struct in6_addr *baddr, __u16 bport,
                                    const struct in6_addr *node, __u16 nport, __u8 proto) {
  __builtin_memcpy(&rk->saddr, baddr, 16);
  __builtin_memcpy(&rk->daddr, node, 16);
  rk->sport = bport;
  rk->dport = nport;
  rk->proto = proto;
}

static __always_inline __u32 fin_rst_flags(__u8 tcp_flags, __u32 fin_bit) {
  return ((tcp_flags & 1) ? fin_bit : 0) | ((tcp_flags & 4) ? FLOW_RST : 0);
}

// Records a packet of a known flow: a new FIN or reset stamps the time exactly with the flag;
// any other packet only when the stamp is SEEN_GRANULE_NS old (never back in time, should
// another CPU have stamped it later than this packet's `now`).
static __always_inline void seen(struct rev_val *r, __u32 new_flags, __u64 now) {
  __u32 flags = r->flags | new_flags;
  if (flags != r->flags) {
    r->seen_ns = now;
    r->flags = flags;
  } else if (now > r->seen_ns + SEEN_GRANULE_NS) {
    r->seen_ns = now;
  }
}

static __always_inline struct svc_val *service_of(const struct pkt *p) {
  struct svc_key sk = {};
  __builtin_memcpy(&sk.vip, &p->key.daddr, 16);
  sk.port = p->key.dport;
  sk.proto = p->key.proto;
  return bpf_map_lookup_elem(&podmin_services, &sk);
}

static __always_inline int to_vip(struct __sk_buff *skb, struct ipv6hdr *ip6) {
  struct pkt p = {};
  if (!parse_l4(skb, ip6, &p)) {
    count(STAT_DROP_UNPARSED);
    return PODMIN_TCX_DROP;
  }
  // The Service is looked up only where a flow is opened or its SYN checked: a known flow's
  // packets need only the flow maps.
  struct svc_val *svc = 0;
  __u32 zero = 0;
  struct config *cfg = bpf_map_lookup_elem(&podmin_config, &zero);
  if (!cfg || !(cfg->flags & 1))
    return PODMIN_TCX_DROP;
  __u64 now = now_ns();

  struct fwd_val *f = bpf_map_lookup_elem(&podmin_fwd_flows, &p.key);
  struct fwd_val nf = {};
  int known = 0;
  if (f) {
    __builtin_memcpy(&nf, f, sizeof(nf));
    struct flow_key rk = {};
    rev_key(&rk, &nf.baddr, nf.bport, &cfg->node_addr, nf.nport, p.key.proto);
    struct rev_val *r = bpf_map_lookup_elem(&podmin_rev_flows, &rk);
    // The forward entry holds only while its port's reverse entry is still this flow's (the
    // LRU may have evicted it, or a new flow taken the port over).
    int same_flow = r && same_addr(&r->caddr, &p.key.saddr) && r->cport == p.key.sport &&
                    r->vport == p.key.dport;
    if (same_flow && (p.tcp_flags & 2)) {
      // A SYN on a remembered tuple keeps its flow only as a retransmission: while the flow
      // has seen no FIN or reset, and its backend is still the one this tuple picks now (a
      // retransmitted SYN never reaches a backend that is no longer ready). A SYN after the
      // connection closed is a new connection on a reused client port: it claims a port like
      // any new flow (its own old one first), so it waits out the reuse delay and cannot race
      // another CPU that is taking that port over.
      struct backend_val *now_b = 0;
      svc = service_of(&p);
      if (svc && svc->count > 0) {
        struct backend_key nk = {.id = svc->id, .slot = flow_hash(&p.key, 0) % svc->count};
        now_b = bpf_map_lookup_elem(&podmin_backends, &nk);
      }
      if (!now_b || !same_addr(&now_b->addr, &nf.baddr) || now_b->port != nf.bport ||
          (r->flags & (FLOW_FIN_FWD | FLOW_FIN_REV | FLOW_RST)))
        same_flow = 0;
    }
    if (same_flow && r) {
      known = 1;
      seen(r, fin_rst_flags(p.tcp_flags, FLOW_FIN_FWD), now);
    }
  }
  if (!known) {
    if (!svc)
      svc = service_of(&p);
    // Only a SYN opens a TCP flow: any other segment without one (a flow this node forgot)
    // gets a reset, so the client learns at once.
    if (!svc || svc->count == 0 || (p.key.proto == IPPROTO_TCP && !(p.tcp_flags & 2)))
      return reject(skb, &p);
    struct backend_key bk = {.id = svc->id, .slot = flow_hash(&p.key, 0) % svc->count};
    struct backend_val *b = bpf_map_lookup_elem(&podmin_backends, &bk);
    if (!b)
      return reject(skb, &p);
    struct flow_key rk = {};
    rev_key(&rk, &b->addr, b->port, &cfg->node_addr, 0, p.key.proto); // port: probed below
    struct rev_val rv = {};
    __builtin_memcpy(&rv.caddr, &p.key.saddr, 16);
    __builtin_memcpy(&rv.vip, &p.key.daddr, 16);
    rv.cport = p.key.sport;
    rv.vport = p.key.dport;
    rv.seen_ns = now;
    rv.flags = fin_rst_flags(p.tcp_flags, FLOW_FIN_FWD);
    // Probes from a hashed start with a hashed stride (double hashing): consecutive ports
    // would gather the flows of busy neighbourhoods into ever longer runs of recently reset
    // ports, and a run of 32 drops the SYN. The stride is odd and not a multiple of 173, so
    // coprime with 2768 = 16 * 173: the probes are distinct ports.
    __u32 start = flow_hash(&p.key, 0x9e3779b9u) % SNAT_PORT_COUNT;
    __u32 stride = (flow_hash(&p.key, 0x7f4a7c15u) % (SNAT_PORT_COUNT / 2)) * 2 + 1;
    if (stride % 173 == 0)
      stride += 2;
    int got = 0;
    for (int i = 0; i < SNAT_PROBES; i++) {
      rk.dport = bpf_htons(SNAT_PORT_MIN + (start + i * stride) % SNAT_PORT_COUNT);
      if (bpf_map_update_elem(&podmin_rev_flows, &rk, &rv, BPF_NOEXIST) == 0) {
        got = 1;
        break;
      }
      struct rev_val *old = bpf_map_lookup_elem(&podmin_rev_flows, &rk);
      if (!old)
        continue;
      // Claim a reusable port by moving its entry's timestamp from the value judged reusable
      // to now, atomically: of two CPUs opening flows onto the same old port at once, only one
      // wins it; the other probes on. (Replacing the entry instead let both win, and one
      // flow's replies went to the other's client.)
      __u64 seen = old->seen_ns;
      if (!reusable(old->flags, seen, p.key.proto, now) ||
          __sync_val_compare_and_swap(&old->seen_ns, seen, now) != seen)
        continue;
      // The old flow's forward entry stays: it no longer matches this entry's client, so
      // its packets are refused, and its next SYN claims a port anew. (Deleting it here
      // raced that SYN on another CPU: the delete could land after the new flow's forward
      // entry was written, and the new connection's first ACK was answered with a reset.)
      // The entry is this flow's now; its replies come only after this packet leaves.
      __builtin_memcpy(&old->caddr, &rv.caddr, 16);
      __builtin_memcpy(&old->vip, &rv.vip, 16);
      old->cport = rv.cport;
      old->vport = rv.vport;
      old->flags = rv.flags;
      old->route.ifindex = 0; // the old flow's client may be elsewhere
      count(STAT_PORT_REUSED);
      got = 1;
      break;
    }
    if (!got) {
      count(STAT_SNAT_EXHAUSTED);
      return PODMIN_TCX_DROP;
    }
    __builtin_memcpy(&nf.baddr, &b->addr, 16);
    nf.bport = b->port;
    nf.nport = rk.dport;
    nf.route.ifindex = 0; // nf may hold an old flow's entry
    if (bpf_map_update_elem(&podmin_fwd_flows, &p.key, &nf, BPF_ANY) < 0)
      return PODMIN_TCX_DROP;
    count(STAT_NEW_FLOW);
  }
  struct in6_addr node;
  __builtin_memcpy(&node, &cfg->node_addr, 16);
  if (rewrite(skb, &p, &node, nf.nport, &nf.baddr, nf.bport) < 0)
    return PODMIN_TCX_DROP;
  count(STAT_FORWARD);
  // A known flow's route is cached in its entry; a new flow's first packet looks it up (the
  // entry was written before the lookup), the next caches it.
  return forward(skb, &node, &nf.baddr, known && f ? &f->route : &nf.route, now);
}

static __always_inline int from_backend(struct __sk_buff *skb, struct ipv6hdr *ip6) {
  struct pkt p = {};
  if (!parse_l4(skb, ip6, &p))
    return PODMIN_TCX_NEXT;
  struct rev_val *r = bpf_map_lookup_elem(&podmin_rev_flows, &p.key);
  if (!r)
    return PODMIN_TCX_NEXT;
  __u64 now = now_ns();
  seen(r, fin_rst_flags(p.tcp_flags, FLOW_FIN_REV), now);
  struct in6_addr vip, client;
  __builtin_memcpy(&vip, &r->vip, 16);
  __builtin_memcpy(&client, &r->caddr, 16);
  __u16 vport = r->vport, cport = r->cport;
  if (rewrite(skb, &p, &vip, vport, &client, cport) < 0)
    return PODMIN_TCX_DROP;
  count(STAT_REVERSE);
  return forward(skb, &vip, &client, &r->route, now);
}

SEC("tc")
int podmin_ingress(struct __sk_buff *skb) {
  void *data = (void *)(long)skb->data;
  void *data_end = (void *)(long)skb->data_end;
  struct ethhdr *eth = data;
  if ((void *)(eth + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IPV6))
    return PODMIN_TCX_NEXT;
  struct ipv6hdr *ip6 = (void *)(eth + 1);
  if ((void *)(ip6 + 1) > data_end)
    return PODMIN_TCX_NEXT;
  if (bpf_map_lookup_elem(&podmin_vips, &ip6->daddr))
    return to_vip(skb, ip6);
  __u32 zero = 0;
  struct config *cfg = bpf_map_lookup_elem(&podmin_config, &zero);
  if (!cfg || !(cfg->flags & 1) || !same_addr(&ip6->daddr, &cfg->node_addr))
    return PODMIN_TCX_NEXT;
  return from_backend(skb, ip6);
}

// The kernel lets only programs under a GPL-compatible licence call GPL-only helpers, and
// bpf_fib_lookup is one (an "Apache-2.0" licence string fails the load: "cannot call
// GPL-restricted function from non-GPL compatible program"). This file is therefore dual
// licensed, GPL-2.0-only or BSD-2-Clause, as its SPDX line says; "Dual BSD/GPL" is the kernel's
// name for that. The rest of podmin is Apache-2.0.
char LICENSE[] SEC("license") = "Dual BSD/GPL";
