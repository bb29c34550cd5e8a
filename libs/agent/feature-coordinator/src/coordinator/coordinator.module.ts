import {
  Controller,
  Inject,
  Injectable,
  Module,
  type DynamicModule,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { admissionToProto, coordinator, reportOfProto } from '@podmin/agent-contracts';
import type { ProcessLifecycle } from '@podmin/agent-contracts';
import { Coordinator } from './coordinator';
import { MAX_WATCH_MS } from './services-view';

const COORDINATOR = Symbol('COORDINATOR');
const LIFECYCLE = Symbol('COORDINATOR_LIFECYCLE');

/** Starts the coordinator with the application and stops it (drain, resign) at shutdown. */
@Injectable()
export class CoordinatorRunner implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    @Inject(COORDINATOR) private readonly coordinator: Coordinator,
    @Inject(LIFECYCLE) private readonly lifecycle: ProcessLifecycle,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    // Binding [node IPv6]:port can fail (address not configured yet): a restart retries it.
    await this.coordinator.start().catch((err: unknown) => {
      this.lifecycle.fail('start coordination', err);
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.coordinator.stop();
  }
}

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

/** The agent-coordinator Nest module. */
@Module({})
export class CoordinatorModule {
  /** Module wired with a built coordinator. */
  static register(instance: Coordinator, lifecycle: ProcessLifecycle): DynamicModule {
    return {
      module: CoordinatorModule,
      controllers: [CoordinatorGrpcController],
      providers: [
        { provide: COORDINATOR, useValue: instance },
        { provide: LIFECYCLE, useValue: lifecycle },
        CoordinatorRunner,
      ],
    };
  }
}
