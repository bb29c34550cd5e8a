import { Controller, Inject } from '@nestjs/common';
import { dataplane } from '@podmin/agent-contracts';
import { DATAPLANE_PROCESS_DEPS, type DataplaneProcessDeps } from './dataplane-runner';

/** gRPC controller of the Dataplane contract. */
@Controller()
@dataplane.DataplaneControllerMethods()
export class DataplaneGrpcController implements dataplane.DataplaneController {
  constructor(@Inject(DATAPLANE_PROCESS_DEPS) private readonly deps: DataplaneProcessDeps) {}

  getStatus(): dataplane.DataplaneStatus {
    const s = this.deps.dataplane.status();
    const c = this.deps.dataplane.counters();
    return {
      attached: s.attached,
      interfaces: s.interfaces,
      snapshotRevision: s.revision,
      vips: s.vips,
      serviceKeys: s.serviceKeys,
      backends: s.backends,
      problem: s.problem ?? this.deps.noPodNetwork ?? '',
      forwarded: c.forward,
      reversed: c.reverse,
      newFlows: c.newFlow,
      rejected: c.reject,
      droppedUnparsed: c.dropUnparsed,
      snatExhausted: c.snatExhausted,
    };
  }
}
