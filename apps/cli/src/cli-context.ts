import os from 'node:os';
import {
  ContextStore,
  ProviderRegistry,
  readCliEnvironment,
  resolveDirs,
  type ClusterContext,
  type ContextChoice,
} from '@podmin/cli-util-config';
import {
  FdWriter,
  TerminalReporter,
  type Reporter,
  type TerminalStreams,
} from '@podmin/cli-util-io';
import type { ObjectStore } from '@podmin/data-access-object-store';
import {
  BUILTIN_PROVIDERS,
  type CliProvider,
  type CliProviderFactory,
  type ProviderShell,
} from '@podmin/cli-providers';

/** Everything a command handler gets from the shell, built once in main. */
export interface CliContext extends ProviderShell {
  /**
   * The context `--context` or `PODMIN_CONTEXT` chose for this invocation (set by `run` once
   * the flags are parsed); undefined means the saved current context. Never saved.
   */
  contextChoice?: ContextChoice;
  /**
   * The context this invocation uses: the chosen one, else the saved current one;
   * CONTEXT_NOT_FOUND for an unknown chosen name, NO_CONTEXT when none is selected.
   */
  currentContext(): Promise<ClusterContext>;
  /** The providers a context may name, each built once for this run. */
  providers: ProviderRegistry<CliProvider>;
  /** The provider of a context; INVALID_ARGUMENT naming the known ones for an unknown name. */
  provider(context: ClusterContext): CliProvider;
  /** The invocation's context (see `currentContext`) and its opened bucket. */
  currentBucket(): Promise<{ context: ClusterContext; store: ObjectStore }>;
}

/**
 * The process's standard streams, each opened when first used: Node.js creates a stream object
 * (loading its stream modules) the first time process.stdin, stdout or stderr is read, and
 * most commands never read stdin (bench/cli-start.mjs). Results are written to descriptor 1
 * directly, so a command that only prints a result never builds process.stdout.
 */
const stdoutWriter = new FdWriter(1, () => process.stdout);
const processStreams: TerminalStreams = {
  get stdout() {
    return stdoutWriter;
  },
  get stderr() {
    return process.stderr;
  },
  get stdin() {
    return process.stdin;
  },
};

/** Builds the CLI context from the process environment and the providers it may use. */
export function createCliContext(
  reporter: Reporter = new TerminalReporter(processStreams),
  environment: Readonly<Record<string, string | undefined>> = process.env,
  providerFactories: Readonly<Record<string, CliProviderFactory>> = BUILTIN_PROVIDERS,
): CliContext {
  const dirs = resolveDirs({
    env: environment,
    platform: process.platform,
    home: environment['HOME'] ?? os.homedir(),
  });
  const env = readCliEnvironment(environment);
  const contexts = new ContextStore(dirs.config, Object.keys(providerFactories));
  const ctx: CliContext = {
    reporter,
    dirs,
    env,
    contexts,
    providers: new ProviderRegistry<CliProvider>({}),
    provider: (context) => ctx.providers.get(context.provider, `using cluster ${context.cluster}`),
    openBucket: (context) => ctx.provider(context).openObjectStore(context),
    secretStores: (context) => ctx.provider(context).secretStores(context),
    async imageStore() {
      const { LocalImageStore } = await import('@podmin/cli-data-access-image-store');
      return LocalImageStore.inCache(dirs.cache);
    },
    currentContext: () => contexts.current(ctx.contextChoice),
    async currentBucket() {
      const context = await ctx.currentContext();
      return { context, store: await ctx.openBucket(context) };
    },
  };
  // Providers get the finished context, so they share its reporter, dirs and stores; they
  // only keep it, so the registry can be filled in once the context exists.
  const built: Record<string, CliProvider> = {};
  for (const [name, factory] of Object.entries(providerFactories)) built[name] = factory(ctx);
  ctx.providers = new ProviderRegistry(built);
  return ctx;
}
