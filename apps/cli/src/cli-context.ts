import os from 'node:os';
import {
  ContextStore,
  readCliEnvironment,
  resolveDirs,
  type CliEnvironment,
  type ClusterContext,
  type PodminDirs,
} from '@podmin/cli-util-config';
import { TerminalReporter, type Reporter, type TerminalStreams } from '@podmin/cli-util-io';
import type { ObjectStore } from '@podmin/data-access-object-store';

/** Everything a command handler gets from the shell, built once in main. */
export interface CliContext {
  reporter: Reporter;
  dirs: PodminDirs;
  env: CliEnvironment;
  contexts: ContextStore;
  /** The current context and its opened bucket; NO_CONTEXT when none is selected. */
  currentBucket(): Promise<{ context: ClusterContext; store: ObjectStore }>;
}

/**
 * The process's standard streams, each opened when first used: Node.js creates a stream object
 * (loading its stream modules) the first time process.stdin, stdout or stderr is read, and
 * most commands never read stdin (bench/cli-start.mjs).
 */
const processStreams: TerminalStreams = {
  get stdout() {
    return process.stdout;
  },
  get stderr() {
    return process.stderr;
  },
  get stdin() {
    return process.stdin;
  },
};

/** Builds the CLI context from the process environment. */
export function createCliContext(
  reporter: Reporter = new TerminalReporter(processStreams),
  environment: Readonly<Record<string, string | undefined>> = process.env,
): CliContext {
  const dirs = resolveDirs({
    env: environment,
    platform: process.platform,
    home: environment['HOME'] ?? os.homedir(),
  });
  const env = readCliEnvironment(environment);
  const contexts = new ContextStore(dirs.config);
  return {
    reporter,
    dirs,
    env,
    contexts,
    async currentBucket() {
      const context = await contexts.current();
      const { openObjectStore } = await import('@podmin/cli-data-access-cluster');
      return { context, store: await openObjectStore(context, env) };
    },
  };
}
