import { serviceVip } from '@podmin/util-desired-state';
import { DnsZone } from '../dns-zone';
import type { ZoneSnapshot } from '../dns-zone-types';

/** The Services of {@link testZone}: default/web and product/database. */
const TEST_SERVICES: ZoneSnapshot['services'] = [
  { namespace: 'default', name: 'web' },
  { namespace: 'product', name: 'database' },
];

/** The zone the DNS specs query: cluster `podmin`, generation 42, the test Services, then `extra`. */
export function testZone(extra: ZoneSnapshot['services'] = []): DnsZone {
  return DnsZone.build({
    cluster: 'podmin',
    generation: 42,
    services: [...TEST_SERVICES, ...extra],
  });
}

/** The VIP of default/web in {@link testZone}. */
export const WEB_VIP = serviceVip('podmin', 'default', 'web');
