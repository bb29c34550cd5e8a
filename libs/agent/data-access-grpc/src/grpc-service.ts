import fs from 'node:fs/promises';
import path from 'node:path';
import type {
  DynamicModule,
  INestApplication,
  INestMicroservice,
  LoggerService,
  Type,
} from '@nestjs/common';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NestFactory } from '@nestjs/core';
import { Transport, type MicroserviceOptions } from '@nestjs/microservices';
import { HealthImplementation } from 'grpc-health-check';
import { AGENT_PROTO_PACKAGE, agentProtoLoaderOptions, protoRoot } from '@podmin/agent-contracts';
import { GrpcErrorFilter } from './grpc-error.filter';

/** How one agent service process binds its gRPC server. */
export interface GrpcServiceOptions {
  /** Root Nest module of the process. */
  module: Type<unknown> | DynamicModule;
  /** Fully qualified service name reported by the standard health service. */
  healthName: string;
  /** Contract files (relative to protoRoot()) the process serves. */
  protoFiles: readonly string[];
  /** Unix socket path in the agent runtime directory (created mode 0600). */
  socketPath: string;
  logger: LoggerService;
  /** Also serve HTTP on this loopback address (the registry); the gRPC server then runs beside it. */
  http?: {
    host: string;
    port: number;
    /** Adjusts the HTTP application before it listens. */
    configure?(app: INestApplication): void;
  };
}

/** A started gRPC service process. */
export interface GrpcService {
  app: INestMicroservice | INestApplication;
  /** The bound HTTP address, when the process serves HTTP too. */
  httpAddress?: { host: string; port: number };
  /** Sets the standard health service's status of this process's service. */
  setServing(serving: boolean): void;
  close(): Promise<void>;
}

/** Socket path of an agent service in the runtime directory. */
export function serviceSocket(runtimeDir: string, service: string): string {
  return path.join(runtimeDir, `${service}.sock`);
}

/**
 * Shared bootstrap of every agent service process: Nest microservice on a Unix socket
 * (mode 0600, never TCP), the gRPC error filter, the grpc.health.v1 service, shutdown hooks.
 */
export async function startGrpcService(options: GrpcServiceOptions): Promise<GrpcService> {
  await fs.mkdir(path.dirname(options.socketPath), { recursive: true, mode: 0o700 });
  await fs.rm(options.socketPath, { force: true });
  const health = new HealthImplementation({
    '': 'NOT_SERVING',
    [options.healthName]: 'NOT_SERVING',
  });
  const root = protoRoot();
  const grpc: MicroserviceOptions = {
    transport: Transport.GRPC,
    options: {
      package: AGENT_PROTO_PACKAGE,
      protoPath: options.protoFiles.map((f) => path.join(root, f)),
      // Decoded as the generated types say, with the options agent-client.ts decodes replies by.
      loader: agentProtoLoaderOptions(),
      url: `unix://${options.socketPath}`,
      onLoadPackageDefinition: (
        _pkg: unknown,
        server: Parameters<HealthImplementation['addToServer']>[0],
      ) => health.addToServer(server),
    },
  };
  const filter = new GrpcErrorFilter((err) => {
    options.logger.error('unexpected error', err instanceof Error ? err.stack : String(err));
  });
  let app: INestMicroservice | INestApplication;
  let httpAddress: { host: string; port: number } | undefined;
  if (options.http) {
    // No body parsing: a pull-only HTTP service refuses every write before reading a body.
    const web = await NestFactory.create(options.module, {
      bodyParser: false,
      logger: options.logger,
    });
    // The error filter maps gRPC errors only; HTTP routes keep their own (e.g. OCI) filter.
    web
      .connectMicroservice<MicroserviceOptions>(grpc, { inheritAppConfig: false })
      .useGlobalFilters(filter);
    options.http.configure?.(web);
    await web.startAllMicroservices();
    await web.listen(options.http.port, options.http.host);
    const bound = (web.getHttpServer() as Server).address() as AddressInfo;
    httpAddress = { host: bound.address, port: bound.port };
    app = web;
  } else {
    const micro = await NestFactory.createMicroservice<MicroserviceOptions>(options.module, {
      ...grpc,
      logger: options.logger,
    });
    micro.useGlobalFilters(filter);
    await micro.listen();
    app = micro;
  }
  await fs.chmod(options.socketPath, 0o600);
  const setServing = (serving: boolean): void => {
    const value = serving ? 'SERVING' : 'NOT_SERVING';
    health.setStatus('', value);
    health.setStatus(options.healthName, value);
  };
  setServing(true);
  return { app, setServing, close: () => app.close(), ...(httpAddress ? { httpAddress } : {}) };
}
