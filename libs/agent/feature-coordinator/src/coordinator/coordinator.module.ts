import {
  Inject,
  Injectable,
  Module,
  type DynamicModule,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import type { ProcessLifecycle } from '@podmin/agent-contracts';
import { Coordinator } from './coordinator';
import { COORDINATOR, CoordinatorGrpcController } from './coordinator.grpc-controller';

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
