import { Module, type DynamicModule } from '@nestjs/common';
import {
  DATAPLANE_PROCESS_DEPS,
  DataplaneRunner,
  type DataplaneProcessDeps,
} from './dataplane-runner';
import { DataplaneGrpcController } from './dataplane.grpc-controller';

/** The agent-dataplane Nest module: the runner and the Dataplane contract. */
@Module({})
export class DataplaneProcessModule {
  /** Module wired with the process's dependencies. */
  static register(deps: DataplaneProcessDeps): DynamicModule {
    return {
      module: DataplaneProcessModule,
      controllers: [DataplaneGrpcController],
      providers: [{ provide: DATAPLANE_PROCESS_DEPS, useValue: deps }, DataplaneRunner],
    };
  }
}
