import { NestFactory } from '@nestjs/core';
import type { INestApplication } from '@nestjs/common';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openBucketStore } from '@podmin/agent-data-access-node';
import type { AgentProcessDefinition } from '@podmin/agent-data-access-runtime';
import type { LoopbackAddress } from '@podmin/agent-util-config';
import { JsonLogger } from '@podmin/agent-util-logging';
import { RegistryModule } from './registry.module';
import type { RegistryStore } from './registry.ports';

/** A started registry and the address it listens on. */
export interface RunningRegistry {
  /** The Nest application; `close()` stops it. */
  app: INestApplication;
  /** Bound host (loopback). */
  host: string;
  /** Bound port (the real one when 0 was asked for). */
  port: number;
}

/** What an in-process registry is built from (tests and benchmarks). */
export interface StartRegistryOptions {
  /** Bucket access. */
  store: RegistryStore;
  /** Logger for Nest and the registry; JSON lines on stderr when omitted. */
  logger?: JsonLogger;
}

/** HTTP settings of the registry application, shared by the process and in-process starts. */
export function configureRegistryHttp(app: INestApplication): void {
  const express = app.getHttpAdapter().getInstance() as { disable(setting: string): void };
  express.disable('x-powered-by');
}

/**
 * Starts the registry's HTTP application alone, in this process, on `config.listen` (no body
 * parsing: every write is refused before a body would be read). The agent-registry process
 * runs the same module through {@link registryProcess}.
 */
export async function startRegistry(
  config: { listen: LoopbackAddress },
  options: StartRegistryOptions,
): Promise<RunningRegistry> {
  const logger = options.logger ?? new JsonLogger({ service: 'agent-registry' });
  const app = await NestFactory.create(RegistryModule.register({ store: options.store, logger }), {
    bodyParser: false,
    logger,
  });
  configureRegistryHttp(app);
  await app.listen(config.listen.port, config.listen.host);
  const address = (app.getHttpServer() as Server).address() as AddressInfo;
  logger.event('info', 'listen', { host: address.address, port: address.port });
  return { app, host: address.address, port: address.port };
}

/** The agent-registry process: the node's pull-only OCI registry on loopback, from the bucket. */
export const registryProcess: AgentProcessDefinition = {
  service: 'registry',
  module: ({ config, env, logger }) => {
    logger.event('info', 'open bucket', {
      provider: config.provider,
      bucket: config.bucket,
      cluster: config.cluster,
    });
    return Promise.resolve(
      RegistryModule.register({ store: openBucketStore(config, env), logger }),
    );
  },
  http: (config) => config.registryListen,
  configureHttp: configureRegistryHttp,
};
