import type { DynamicModule, INestApplication, Type } from '@nestjs/common';
import {
  AGENT_SERVICES,
  isSupervisorMessage,
  type AgentServiceName,
  type ChildMessage,
  type ProcessLifecycle,
} from '@podmin/agent-contracts';
import {
  agentClient,
  serviceSocket,
  startGrpcService,
  type AgentClient,
  type GrpcService,
} from '@podmin/agent-data-access-grpc';
import { AGENT_PROVIDERS } from '@podmin/agent-data-access-node';
import {
  SERVICE_SHUTDOWN_GRACE_MS,
  parseAgentProcessConfig,
  type AgentProcessConfig,
  type LoopbackAddress,
} from '@podmin/agent-util-config';
import { JsonLogger } from '@podmin/agent-util-logging';
import { PodminError } from '@podmin/util-errors';
import { scheduleCleanPageRelease, type CleanPageSchedule } from '@podmin/agent-data-access-memory';

/** Process environment. */
export type ProcessEnv = Readonly<Record<string, string | undefined>>;

/** What a service process's module is built from. */
export interface AgentProcessContext {
  /** The frozen configuration, parsed once. */
  readonly config: AgentProcessConfig;
  /** The environment it was parsed from (endpoint overrides for emulators). */
  readonly env: ProcessEnv;
  /** The process's JSON logger. */
  readonly logger: JsonLogger;
  /** Health reports and fatal loop failures, to the supervisor. */
  readonly lifecycle: ProcessLifecycle;
  /** A typed client of another service process on this node (closed at shutdown). */
  readonly client: <N extends AgentServiceName>(name: N) => AgentClient<N>;
}

/** One agent service process: its contract name and how its Nest module is built. */
export interface AgentProcessDefinition {
  /** Which service this is (its socket, health name and log name follow from it). */
  readonly service: AgentServiceName;
  /**
   * Builds the root module. May read what the module needs first (secrets, say); a PodminError
   * thrown here is logged with its hint and the process exits 1.
   */
  readonly module: (context: AgentProcessContext) => Promise<Type<unknown> | DynamicModule>;
  /** Serve HTTP too, on this loopback address (the registry). */
  readonly http?: (config: AgentProcessConfig) => LoopbackAddress;
  /** Adjusts the HTTP application before it listens. */
  readonly configureHttp?: (app: INestApplication) => void;
}

/** The IPC channel to the supervising podmin-agent (absent when run by hand). */
export interface SupervisorChannel {
  /** Sends one typed message; a no-op without a supervisor. */
  send(message: ChildMessage): void;
  /** Calls `listener` once when the supervisor goes away (even by SIGKILL). */
  onDisconnect(listener: () => void): void;
  /**
   * Calls `listener` when the supervisor says stop (`{ type: "stop" }`). Present only when a
   * supervisor is: the process then ignores SIGTERM and SIGINT and stops on this word, so a
   * signal to its whole process group cannot cut podmin-agent's shutdown order short.
   */
  onStop?: (listener: () => void) => void;
}

/** What a test may replace; a real process uses the defaults. */
export interface RunAgentProcessOptions {
  argv?: readonly string[];
  env?: ProcessEnv;
  channel?: SupervisorChannel;
  /** Ends the process (default `process.exit`). */
  exit?: (code: number) => void;
  /** Registers the termination signals (default SIGTERM and SIGINT on `process`, every time). */
  onSignal?: (listener: (signal: NodeJS.Signals) => void) => void;
  /** Longest a graceful shutdown may take before the process exits anyway (default 8 s). */
  shutdownGraceMs?: number;
  logger?: JsonLogger;
  /** When to give back start-up's clean file pages (clean-pages.ts); `false` never. */
  cleanPages?: CleanPageSchedule | false;
}

/** A started service process. */
export interface RunningAgentProcess {
  readonly config: AgentProcessConfig;
  readonly grpc: GrpcService;
  /** Stops serving (bounded by the grace), closes clients, then exits with `code`. */
  shutdown(code: number): Promise<void>;
}

/** The IPC channel of a process forked by podmin-agent. */
export const processChannel: SupervisorChannel = {
  send: (message) => {
    if (process.connected) process.send?.(message);
  },
  onDisconnect: (listener) => {
    if (process.send) process.once('disconnect', listener);
  },
  ...(process.send
    ? {
        onStop: (listener: () => void) => {
          process.on('message', (message: unknown) => {
            if (isSupervisorMessage(message)) listener();
          });
        },
      }
    : {}),
};

// The process's own shutdown bound, below the supervisor's kill (both in the agent's constants).
const DEFAULT_GRACE_MS = SERVICE_SHUTDOWN_GRACE_MS;

/**
 * The one entry of every agent service process: parses flags and environment once into a
 * frozen config (exit 2 listing every bad value), builds the module, serves its gRPC contract
 * and the standard health service on its Unix socket (and HTTP when the definition asks),
 * reports ready to the supervisor, and shuts down within a bounded grace on the supervisor's
 * stop message, a fatal loop failure, or when the supervisor goes. Run by hand (no
 * supervisor) it shuts down on SIGTERM or SIGINT; under a supervisor it logs and ignores them
 * (they reached the whole process group: the supervisor got them too and stops it in order).
 */
export async function runAgentProcess(
  definition: AgentProcessDefinition,
  options: RunAgentProcessOptions = {},
): Promise<RunningAgentProcess | undefined> {
  const contract = AGENT_SERVICES[definition.service];
  const logger = options.logger ?? new JsonLogger({ service: `agent-${contract.name}` });
  const channel = options.channel ?? processChannel;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const env = options.env ?? process.env;
  let config: AgentProcessConfig;
  try {
    config = parseAgentProcessConfig(options.argv ?? process.argv.slice(2), env, AGENT_PROVIDERS);
  } catch (err) {
    logger.event('error', 'validate configuration', { error: messageOf(err) });
    exit(2);
    return undefined;
  }
  const clients: Array<{ close(): void }> = [];
  let shuttingDown: Promise<void> | undefined;
  let grpc: GrpcService | undefined;
  let cancelRelease = (): void => undefined;
  const shutdown = (code: number): Promise<void> => {
    shuttingDown ??= (async () => {
      logger.event('info', 'shut down', { code });
      cancelRelease();
      grpc?.setServing(false);
      const grace = new Promise<'timeout'>((resolve) =>
        setTimeout(() => resolve('timeout'), options.shutdownGraceMs ?? DEFAULT_GRACE_MS).unref(),
      );
      const closed = (grpc?.close() ?? Promise.resolve()).then(() => 'closed' as const);
      const outcome = await Promise.race([closed, grace]).catch((err: unknown) => {
        logger.event('error', 'close application', { error: messageOf(err) });
        return 'failed' as const;
      });
      if (outcome === 'timeout') logger.event('warn', 'shutdown grace exceeded; exiting');
      for (const client of clients) client.close();
      // Counts of warnings folded in the last window would otherwise be lost with the process.
      logger.flushRepeats();
      exit(outcome === 'failed' && code === 0 ? 1 : code);
    })();
    return shuttingDown;
  };
  const lifecycle: ProcessLifecycle = {
    reportHealth: (healthy, detail) =>
      channel.send({ type: 'health', healthy, ...(detail ? { detail } : {}) }),
    fail: (what, err) => {
      // A dead loop must not leave a process that looks alive: exit so the supervisor restarts it.
      logger.event('error', what, { error: messageOf(err) });
      void shutdown(1);
    },
  };
  const context: AgentProcessContext = {
    config,
    env,
    logger,
    lifecycle,
    client: (name) => {
      const client = agentClient(name, serviceSocket(config.runtimeDir, name));
      clients.push(client);
      return client;
    },
  };
  const socketPath = serviceSocket(config.runtimeDir, contract.name);
  try {
    const module = await definition.module(context);
    const http = definition.http?.(config);
    grpc = await startGrpcService({
      module,
      healthName: contract.healthName,
      protoFiles: [contract.protoFile],
      socketPath,
      logger,
      ...(http
        ? {
            http: {
              ...http,
              ...(definition.configureHttp ? { configure: definition.configureHttp } : {}),
            },
          }
        : {}),
    });
  } catch (err) {
    logger.event('error', 'start', {
      error: messageOf(err),
      ...(err instanceof PodminError && err.hint ? { hint: err.hint } : {}),
    });
    for (const client of clients) client.close();
    exit(1);
    return undefined;
  }
  const onSignal =
    options.onSignal ??
    ((listener: (signal: NodeJS.Signals) => void) => {
      // `on`, not `once`: a second Ctrl-C must not fall back to Node's default (terminate).
      process.on('SIGTERM', listener);
      process.on('SIGINT', listener);
    });
  const onStop = channel.onStop;
  onSignal((signal) => {
    if (onStop) {
      logger.event('info', 'ignore signal; the supervisor stops this process', { signal });
      return;
    }
    logger.event('info', 'signal', { signal });
    void shutdown(0);
  });
  onStop?.(() => {
    logger.event('info', 'stop requested by the supervisor');
    void shutdown(0);
  });
  channel.onDisconnect(() => {
    // Under podmin-agent the IPC channel closes when the supervisor dies (even by SIGKILL):
    // exit with it rather than linger as an orphan holding sockets and ports.
    logger.event('warn', 'supervisor gone');
    void shutdown(0);
  });
  logger.event('info', 'serve grpc', { socket: socketPath });
  if (grpc.httpAddress) logger.event('info', 'listen', { ...grpc.httpAddress });
  channel.send({ type: 'ready' });
  if (options.cleanPages !== false)
    cancelRelease = scheduleCleanPageRelease(
      (level, msg, fields) => logger.event(level, msg, fields),
      options.cleanPages,
    );
  return { config, grpc, shutdown };
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
