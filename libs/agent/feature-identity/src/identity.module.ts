import { Module, type DynamicModule } from '@nestjs/common';
import { IdentityGrpcController } from './identity.grpc-controller';
import {
  IDENTITY_PROCESS_DEPS,
  IdentityProcessService,
  type IdentityProcessDeps,
} from './identity.service';

/** The agent-identity Nest module. */
@Module({})
export class IdentityModule {
  /** Module wired with the process's dependencies. */
  static register(deps: IdentityProcessDeps): DynamicModule {
    return {
      module: IdentityModule,
      controllers: [IdentityGrpcController],
      providers: [{ provide: IDENTITY_PROCESS_DEPS, useValue: deps }, IdentityProcessService],
    };
  }
}
