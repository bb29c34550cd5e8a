import { NestFactory } from '@nestjs/core';
import type { INestApplication } from '@nestjs/common';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PodminError } from '@podmin/util-errors';
import { createRegistryStore } from './adapters/create-store';
import { JsonLogger } from '@podmin/agent-util-logging';
import { parseRegistryConfig } from './registry.config';
import type { RegistryConfig } from './registry.config';
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

/** What a start may override; tests pass a fake store or a quiet logger. */
export interface StartRegistryOptions {
  /** Bucket access; built from the config when omitted. */
  store?: RegistryStore;
  /** Logger for Nest and the registry; JSON lines on stderr when omitted. */
  logger?: JsonLogger;
}

/**
 * Creates the Nest application for `config` (no body parsing: every write is refused before
 * a body would be read) and binds it to the configured loopback address.
 */
export async function startRegistry(
  config: RegistryConfig,
  options: StartRegistryOptions = {},
): Promise<RunningRegistry> {
  const logger = options.logger ?? new JsonLogger({ service: 'agent-registry' });
  const store = options.store ?? createRegistryStore(config);
  const app = await NestFactory.create(RegistryModule.register({ store, logger }), {
    bodyParser: false,
    logger,
  });
  const express = app.getHttpAdapter().getInstance() as { disable(setting: string): void };
  express.disable('x-powered-by');
  app.enableShutdownHooks();
  await app.listen(config.listen.port, config.listen.host);
  const address = (app.getHttpServer() as Server).address() as AddressInfo;
  logger.event('info', 'listen', {
    host: address.address,
    port: address.port,
    provider: config.provider,
    bucket: config.bucket,
    cluster: config.cluster,
  });
  return { app, host: address.address, port: address.port };
}

/**
 * The process entry point: validates flags once (exit code 2 listing every bad value), then
 * serves until SIGTERM/SIGINT. Failures are logged as JSON lines on stderr.
 */
export async function runRegistry(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  const logger = new JsonLogger({ service: 'agent-registry' });
  let config: RegistryConfig;
  try {
    config = parseRegistryConfig(argv, env, process.cwd());
  } catch (err) {
    logger.event('error', 'validate configuration', {
      error: err instanceof PodminError ? err.message : err,
    });
    process.exitCode = 2;
    return;
  }
  try {
    await startRegistry(config, { logger });
  } catch (err) {
    logger.event('error', 'start registry', { error: err });
    process.exitCode = 1;
  }
}
