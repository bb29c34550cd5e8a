// The NAT rules kube-proxy writes for a list of Services, in its two modes, for the dataplane
// bench's comparison (bench/dataplane.mjs says how each is measured). Each Service is
// { vip, ports: [{ targetPort }], backends: [{ address }] }, served on TCP port 80.

/**
 * The nat table kube-proxy (iptables mode) writes for `list`, for ip6tables-restore; marked
 * packets leave source-NATed to `node`.
 */
export function kubeProxyNat(list, node) {
  const chains = [':KUBE-SERVICES - [0:0]', ':KUBE-POSTROUTING - [0:0]', ':KUBE-MARK-MASQ - [0:0]'];
  const rules = [
    '-A PREROUTING -j KUBE-SERVICES',
    '-A POSTROUTING -j KUBE-POSTROUTING',
    '-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000',
    '-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN',
    '-A KUBE-POSTROUTING -j MARK --xor-mark 0x4000',
    `-A KUBE-POSTROUTING -j SNAT --to-source ${node} --random-fully`,
  ];
  const services = [];
  const perService = [];
  list.forEach((s, i) => {
    const svc = `KUBE-SVC-${i}`;
    chains.push(`:${svc} - [0:0]`);
    services.push(`-A KUBE-SERVICES -d ${s.vip}/128 -p tcp -m tcp --dport 80 -j ${svc}`);
    perService.push(`-A ${svc} -j KUBE-MARK-MASQ`);
    const n = s.backends.length;
    s.backends.forEach((b, k) => {
      const sep = `KUBE-SEP-${i}-${k}`;
      chains.push(`:${sep} - [0:0]`);
      // kube-proxy's choice: endpoint k with probability 1/(n-k) of what is left.
      const pick =
        k < n - 1 ? `-m statistic --mode random --probability ${(1 / (n - k)).toFixed(11)} ` : '';
      perService.push(`-A ${svc} ${pick}-j ${sep}`);
      perService.push(`-A ${sep} -s ${b.address}/128 -j KUBE-MARK-MASQ`);
      perService.push(
        `-A ${sep} -p tcp -m tcp -j DNAT --to-destination [${b.address}]:${s.ports[0].targetPort}`,
      );
    });
  });
  return [
    '*nat',
    ':PREROUTING ACCEPT [0:0]',
    ':INPUT ACCEPT [0:0]',
    ':OUTPUT ACCEPT [0:0]',
    ':POSTROUTING ACCEPT [0:0]',
    ...chains,
    ...rules,
    ...services,
    ...perService,
    'COMMIT',
    '',
  ].join('\n');
}

/**
 * The NAT part of the table kube-proxy's nftables mode writes for `list` (pkg/proxy/nftables),
 * for `nft -f`: one verdict-map lookup on VIP . protocol . port, a chain per Service choosing
 * an endpoint with numgen, a chain per endpoint that DNATs, and masquerading of marked packets
 * (as a SNAT to the node address, fully random, like the ip6tables table and our dataplane).
 */
export function kubeProxyNft(list, node) {
  const out = [
    'table ip6 kube-proxy {',
    '  chain mark-for-masquerade { meta mark set meta mark | 0x4000; }',
    '  chain masquerading {',
    '    meta mark & 0x4000 == 0 return',
    '    meta mark set meta mark ^ 0x4000',
    `    snat ip6 to ${node} fully-random`,
    '  }',
  ];
  const elements = [];
  list.forEach((s, i) => {
    const svc = `service-${i}-tcp-80`;
    elements.push(`${s.vip} . tcp . 80 : goto ${svc}`);
    const eps = s.backends.map((b, k) => {
      const ep = `endpoint-${i}-${k}`;
      out.push(
        `  chain ${ep} { ip6 saddr ${b.address} jump mark-for-masquerade; meta l4proto tcp dnat to [${b.address}]:${s.ports[0].targetPort}; }`,
      );
      return `${k} : goto ${ep}`;
    });
    out.push(
      `  chain ${svc} { jump mark-for-masquerade; numgen random mod ${eps.length} vmap { ${eps.join(', ')} }; }`,
    );
  });
  out.push(
    '  map service-ips {',
    '    type ipv6_addr . inet_proto . inet_service : verdict',
    `    elements = { ${elements.join(',\n      ')} }`,
    '  }',
    '  chain services { ip6 daddr . meta l4proto . th dport vmap @service-ips; }',
    // The hooks last: every chain they reach exists by then.
    '  chain nat-prerouting { type nat hook prerouting priority dstnat; policy accept; jump services; }',
    '  chain nat-postrouting { type nat hook postrouting priority srcnat; policy accept; jump masquerading; }',
    '}',
    '',
  );
  return out.join('\n');
}
