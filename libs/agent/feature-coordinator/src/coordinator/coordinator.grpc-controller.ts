import { Controller, Inject } from '@nestjs/common';
import { admissionToProto, coordinator, reportOfProto } from '@podmin/agent-contracts';
import { Coordinator } from './coordinator';
import { MAX_WATCH_MS } from './services-view';

/** Token of the process's Coordinator, which the controller and the module's runner share. */
export const COORDINATOR = Symbol('COORDINATOR');

/** gRPC controller of the Coordinator contract (local Unix socket): converts messages only. */
@Controller()
@coordinator.CoordinatorControllerMethods()
export class CoordinatorGrpcController implements coordinator.CoordinatorController {
  constructor(@Inject(COORDINATOR) private readonly coordinator: Coordinator) {}

  async watchServices(
    request: coordinator.WatchServicesRequest,
  ): Promise<coordinator.ServicesView> {
    const waitMs = Math.min(MAX_WATCH_MS, request.waitMs ?? 0);
    const identitiesOnly = request.identitiesOnly ?? false;
    const view = await this.coordinator.view.watch(request.knownRevision ?? '', waitMs, {
      identitiesOnly,
    });
    if (view === undefined)
      return {
        snapshot: undefined,
        source: this.coordinator.view.current(identitiesOnly).source,
        unchanged: true,
      };
    return { snapshot: view.snapshot, source: view.source, unchanged: false };
  }

  getLeadership(): coordinator.Leadership {
    return this.coordinator.leadership();
  }

  syncRollouts(request: coordinator.NodeRollouts): coordinator.RolloutAdmissions {
    const answer = this.coordinator.syncRollouts(
      (request.reports ?? []).map(reportOfProto),
      (request.draining ?? []).map((d) => ({
        namespace: d.namespace,
        revision: d.revision,
        replacementRevision: d.replacementRevision,
      })),
      request.indexEtag ?? '',
    );
    return {
      admissions: answer.admissions.map(admissionToProto),
      leaderKnown: answer.leaderKnown,
    };
  }
}
