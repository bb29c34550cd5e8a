import { selectInterfaces } from './interfaces';

const links = [
  { ifname: 'lo', ifindex: 1, link_type: 'loopback' },
  { ifname: 'ens5', ifindex: 2, link_type: 'ether' },
  { ifname: 'ens6', ifindex: 3, link_type: 'ether' },
  { ifname: 'veth1a', ifindex: 7, link_type: 'ether' },
  { ifname: 'veth2b', ifindex: 8, link_type: 'ether' },
  { ifname: 'wg0', ifindex: 9, link_type: 'none' },
];

describe('selectInterfaces', () => {
  it('picks Pod veths by their /128 routes, the Pod ENI by its rule, and the default route', () => {
    const picked = selectInterfaces(
      {
        routes: [
          { dst: '2600:1f14:abc:1200:1::5', dev: 'veth1a', metric: 1024 },
          { dst: '2600:1f14:abc:1200:1::6', dev: 'veth2b', metric: 1024 },
          { dst: '2600:1f14:abc:1200:2::6', dev: 'wg0' },
          { dst: 'default', dev: 'ens5', metric: 1024 },
          { dst: 'default', dev: 'wg0', metric: 2048 },
          { dst: 'default', dev: 'ens6', table: '100', metric: 1024 },
          { dst: '2600:1f14:abc:1200:1::7', dev: 'ens5', table: 'local', type: 'local' },
        ],
        rules: [
          { src: 'all', table: 'main' },
          { src: '2600:1f14:abc:1200:1::', srclen: 80, table: '100' },
        ],
        links,
      },
      '2600:1f14:abc:1200:1::/80',
    );
    expect(picked).toEqual([
      { name: 'ens5', ifindex: 2, roles: ['default-route'] },
      { name: 'ens6', ifindex: 3, roles: ['pod-eni'] },
      { name: 'veth1a', ifindex: 7, roles: ['pod-veth'] },
      { name: 'veth2b', ifindex: 8, roles: ['pod-veth'] },
    ]);
  });

  it('takes the lowest-metric default route and skips devices that are not Ethernet', () => {
    const picked = selectInterfaces(
      {
        routes: [
          { dst: 'default', dev: 'wg0', metric: 10 },
          { dst: 'default', dev: 'ens6', metric: 100 },
          { dst: 'default', dev: 'ens5', metric: 1024 },
        ],
        rules: [],
        links,
      },
      '2600:1f14:abc:1200:1::/80',
    );
    // wg0 wins the metric but has no Ethernet header, so nothing is attached for that role.
    expect(picked).toEqual([]);
  });
});
