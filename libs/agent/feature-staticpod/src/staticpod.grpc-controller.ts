import { Controller, Inject } from '@nestjs/common';
import { staticpod } from '@podmin/agent-contracts';
import { StaticPodService } from './staticpod.service';

/** gRPC controller of the StaticPod contract: converts messages only. */
@Controller()
@staticpod.StaticPodControllerMethods()
export class StaticPodGrpcController implements staticpod.StaticPodController {
  constructor(@Inject(StaticPodService) private readonly service: StaticPodService) {}

  getStatus(): staticpod.StaticPodStatus {
    const s = this.service.reconciler.status();
    return {
      healthy: s.healthy,
      lastError: s.lastError ?? '',
      lastSuccess: s.lastSuccess?.toISOString() ?? '',
      indexEtag: s.indexEtag ?? '',
      pods: s.pods,
    };
  }
}
