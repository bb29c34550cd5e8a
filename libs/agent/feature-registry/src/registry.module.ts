import { Module } from '@nestjs/common';
import type { DynamicModule } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { BlobSender } from './blob-sender';
import { HashingThread } from './hashing-thread';
import { OciErrorFilter } from './oci-error.filter';
import { RegistryGrpcController } from './registry.grpc-controller';
import { RegistryHttpController } from './registry.http-controller';
import { REGISTRY_LOGGER, REGISTRY_STORE } from './registry.ports';
import type { RegistryStore, StructuredLogger } from './registry.ports';
import { RegistryService } from './registry.service';
import { TransferBudget, type TransferLimits } from './transfer-budget';

/** What the registry module is wired with. */
export interface RegistryModuleOptions {
  /** Bucket access (local directory or S3 adapter, or a fake in tests). */
  store: RegistryStore;
  /** Structured logger for request failures. */
  logger: StructuredLogger;
  /** Bounds of concurrent blob transfers (default `DEFAULT_TRANSFER_LIMITS`). */
  limits?: TransferLimits;
}

/**
 * The read-only registry: controller, service, blob sender and its hashing thread, the OCI
 * error filter, and the ports given.
 */
@Module({})
export class RegistryModule {
  /** Builds the module around a store and a logger. */
  static register(options: RegistryModuleOptions): DynamicModule {
    return {
      module: RegistryModule,
      controllers: [RegistryHttpController, RegistryGrpcController],
      providers: [
        RegistryService,
        BlobSender,
        HashingThread,
        { provide: TransferBudget, useValue: new TransferBudget(options.limits) },
        { provide: REGISTRY_STORE, useValue: options.store },
        { provide: REGISTRY_LOGGER, useValue: options.logger },
        { provide: APP_FILTER, useClass: OciErrorFilter },
      ],
    };
  }
}
