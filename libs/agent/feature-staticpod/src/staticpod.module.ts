import { Module, type DynamicModule } from '@nestjs/common';
import { PROCESS_LIFECYCLE, type ProcessLifecycle } from '@podmin/agent-contracts';
import type { StructuredLogger } from '@podmin/agent-util-logging';
import type { AgentProcessConfig } from '@podmin/agent-util-config';
import { StaticPodGrpcController } from './staticpod.grpc-controller';
import {
  DESIRED_STATE_READER,
  IDENTITY_ISSUER,
  SECRET_SOURCE,
  type DesiredStateReader,
  type IdentityIssuer,
  type SecretSource,
} from './staticpod.ports';
import type { LoopTiming } from './reconcile-loop';
import {
  STATICPOD_CONFIG,
  STATICPOD_LOGGER,
  STATICPOD_TIMING,
  StaticPodService,
} from './staticpod.service';

/** Adapters the process wires into the module. */
export interface StaticPodAdapters {
  config: AgentProcessConfig;
  logger: StructuredLogger;
  /** Health reports and fatal loop failures, to the supervisor. */
  lifecycle: ProcessLifecycle;
  store: DesiredStateReader;
  secrets: SecretSource;
  identity: IdentityIssuer;
  /** Overrides of the reconcile loop's timing, e.g. `passTimeoutMs` (defaults: DEFAULT_TIMING). */
  timing?: Partial<LoopTiming>;
}

/** The agent-staticpod Nest module. */
@Module({})
export class StaticPodModule {
  /** Module wired with concrete adapters. */
  static register(adapters: StaticPodAdapters): DynamicModule {
    return {
      module: StaticPodModule,
      controllers: [StaticPodGrpcController],
      providers: [
        { provide: STATICPOD_CONFIG, useValue: adapters.config },
        { provide: STATICPOD_LOGGER, useValue: adapters.logger },
        { provide: PROCESS_LIFECYCLE, useValue: adapters.lifecycle },
        { provide: DESIRED_STATE_READER, useValue: adapters.store },
        { provide: SECRET_SOURCE, useValue: adapters.secrets },
        { provide: IDENTITY_ISSUER, useValue: adapters.identity },
        ...(adapters.timing ? [{ provide: STATICPOD_TIMING, useValue: adapters.timing }] : []),
        StaticPodService,
      ],
    };
  }
}
