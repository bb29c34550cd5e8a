import { Controller, Inject } from '@nestjs/common';
import { dns } from '@podmin/agent-contracts';
import { formatAddress } from '@podmin/agent-util-config';
import type { CoordinatorZoneStatus } from './coordinator-zone-source';
import { DnsServer } from './dns-server';

/** Token of what the controller reads the served zone's status from (the zone source). */
export const ZONE_STATUS = Symbol('DNS_ZONE_STATUS');

/** gRPC controller of the Dns contract: what is served and what has been seen. */
@Controller()
@dns.DnsControllerMethods()
export class DnsGrpcController implements dns.DnsController {
  constructor(
    @Inject(DnsServer) private readonly server: DnsServer,
    @Inject(ZONE_STATUS) private readonly zone: { status(): CoordinatorZoneStatus },
  ) {}

  getStatus(): dns.DnsStatus {
    const counters = this.server.counters();
    const status = this.zone.status();
    return {
      address: formatAddress(this.server.address()),
      services: status.zone.size,
      snapshotRevision: status.revision,
      answered: Object.values(counters.responses).reduce((a, b) => a + b, 0),
      malformed: counters.malformed,
    };
  }
}
