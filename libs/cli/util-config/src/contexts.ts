import fs from 'node:fs/promises';
import path from 'node:path';
import { PodminError, ValidationError, type FieldProblem } from '@podmin/util-errors';
import { withFileLock, writeFileAtomic } from '@podmin/util-fs';

/** A provider name; which names exist is the CLI's provider registry's business. */
export type Provider = string;

/** Secret stores a context may default to. */
export const SECRETS_PROVIDERS = ['aws-parameter-store', 'aws-secrets-manager', 'local'] as const;
/** A secrets-provider name. */
export type SecretsProvider = (typeof SECRETS_PROVIDERS)[number];

/** One saved cluster context. */
export interface ClusterContext {
  cluster: string;
  provider: Provider;
  region: string;
  /** S3 bucket name (aws) or absolute bucket directory (local). */
  bucket: string;
  profile?: string;
  secretsProvider: SecretsProvider;
}

/** The whole config file. */
export interface PodminConfig {
  current?: string;
  contexts: Record<string, ClusterContext>;
}

const CONTEXT_FIELDS = new Set([
  'cluster',
  'provider',
  'region',
  'bucket',
  'profile',
  'secretsProvider',
]);

/** Reads and writes `<config>/config.json` with atomic, locked, 0600 writes. */
export class ContextStore {
  readonly file: string;
  private readonly lockFile: string;

  /** `providers`: the provider names a saved context may name (the registry's list). */
  constructor(
    configDir: string,
    private readonly providers: readonly string[],
  ) {
    this.file = path.join(configDir, 'config.json');
    this.lockFile = path.join(configDir, '.config.json.lock');
  }

  /** Reads the config; a missing file is an empty config. */
  async read(): Promise<PodminConfig> {
    let text: string;
    try {
      text = await fs.readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { contexts: {} };
      throw new PodminError('IO_ERROR', `reading ${this.file}: ${(err as Error).message}`, {
        cause: err,
      });
    }
    return parseConfig(text, this.file, this.providers);
  }

  /**
   * Applies `mutate` to the current config under a lock and writes the result atomically;
   * `command` (e.g. `podmin connect`) prefixes failures so they say who was writing.
   */
  async update(
    mutate: (config: PodminConfig) => PodminConfig,
    command?: string,
  ): Promise<PodminConfig> {
    const doing = `${command === undefined ? '' : `${command}: `}updating ${this.file}`;
    return withFileLock(this.lockFile, doing, async () => {
      const next = mutate(await this.read());
      await writeFileAtomic(this.file, JSON.stringify(sortConfig(next), null, 2) + '\n', {
        mode: 0o600,
      });
      return next;
    });
  }

  /**
   * The context this invocation uses: `choice` when given (from `--context` or
   * `PODMIN_CONTEXT`), else the saved current one. Only reads the file: a choice is never saved.
   * CONTEXT_NOT_FOUND naming the choice and the known contexts; NO_CONTEXT with a hint to
   * connect when nothing is chosen or saved.
   */
  async current(choice?: ContextChoice): Promise<ClusterContext> {
    return resolveContext(await this.read(), choice);
  }
}

/** Where a one-invocation choice of context came from, for messages. */
export type ContextChoiceSource = '--context' | 'PODMIN_CONTEXT';

/** A context chosen for one invocation instead of the saved current one. */
export interface ContextChoice {
  name: string;
  source: ContextChoiceSource;
}

/**
 * The context one invocation chose, if any: the `--context` flag wins over the
 * `PODMIN_CONTEXT` variable; an empty value counts as unset.
 */
export function chooseContext(
  flag: string | undefined,
  variable: string | undefined,
): ContextChoice | undefined {
  if (flag) return { name: flag, source: '--context' };
  if (variable) return { name: variable, source: 'PODMIN_CONTEXT' };
  return undefined;
}

/**
 * Resolves the context of one invocation from the config: the chosen one when given, else the
 * saved current one. CONTEXT_NOT_FOUND names a chosen context that is not saved and lists the
 * known ones; NO_CONTEXT says how to select one.
 */
export function resolveContext(config: PodminConfig, choice?: ContextChoice): ClusterContext {
  if (choice !== undefined) {
    const chosen = Object.hasOwn(config.contexts, choice.name)
      ? config.contexts[choice.name]
      : undefined;
    if (chosen) return chosen;
    const known = Object.keys(config.contexts).sort();
    throw new PodminError(
      'CONTEXT_NOT_FOUND',
      `using context ${JSON.stringify(choice.name)} (from ${choice.source}): no such context; known contexts: ${known.join(', ') || 'none'}`,
      {
        hint: `pass one of the known contexts, or run \`podmin connect ${choice.name} --provider …\` to add it`,
      },
    );
  }
  const ctx = config.current ? config.contexts[config.current] : undefined;
  if (!ctx) {
    throw new PodminError(
      'NO_CONTEXT',
      'this command needs a current cluster context: none is selected',
      {
        hint: 'run `podmin connect <cluster> --provider local` (or aws), or `podmin use <cluster>`, or pass --context <cluster>',
      },
    );
  }
  return ctx;
}

function sortConfig(config: PodminConfig): PodminConfig {
  const contexts: Record<string, ClusterContext> = {};
  for (const name of Object.keys(config.contexts).sort())
    contexts[name] = config.contexts[name] as ClusterContext;
  return config.current === undefined ? { contexts } : { current: config.current, contexts };
}

/** Strictly parses the config file, listing every bad field. */
export function parseConfig(
  text: string,
  source: string,
  providers: readonly string[],
): PodminConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new PodminError('CONFIG_INVALID', `reading ${source}: not valid JSON`, {
      cause: err,
      hint: 'fix the JSON by hand, or move the file aside (it holds every saved context) and run `podmin connect` to start a new one',
    });
  }
  const problems: FieldProblem[] = [];
  const obj = raw as Record<string, unknown>;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ValidationError(
      `reading ${source}`,
      [{ field: '(document)', message: 'must be a JSON object' }],
      {
        code: 'INVALID_ARGUMENT',
      },
    );
  }
  for (const key of Object.keys(obj)) {
    if (key !== 'current' && key !== 'contexts')
      problems.push({ field: key, message: 'unknown field; allowed: current, contexts' });
  }
  const contexts: Record<string, ClusterContext> = {};
  const rawContexts = obj['contexts'] ?? {};
  if (typeof rawContexts !== 'object' || rawContexts === null || Array.isArray(rawContexts)) {
    problems.push({ field: 'contexts', message: 'must be an object' });
  } else {
    for (const [name, value] of Object.entries(rawContexts as Record<string, unknown>)) {
      const ctx = value as Record<string, unknown>;
      const at = `contexts.${name}`;
      if (typeof value !== 'object' || value === null) {
        problems.push({ field: at, message: 'must be an object' });
        continue;
      }
      for (const key of Object.keys(ctx)) {
        if (!CONTEXT_FIELDS.has(key))
          problems.push({
            field: `${at}.${key}`,
            message: `unknown field; allowed: ${[...CONTEXT_FIELDS].join(', ')}`,
          });
      }
      const str = (k: string): string | undefined =>
        typeof ctx[k] === 'string' && ctx[k] !== '' ? ctx[k] : undefined;
      const provider = str('provider');
      const secretsProvider = str('secretsProvider');
      if (str('cluster') !== name)
        problems.push({ field: `${at}.cluster`, message: `must equal the context name ${name}` });
      if (!provider || !providers.includes(provider))
        problems.push({
          field: `${at}.provider`,
          message: `must be one of ${providers.join(', ')}`,
        });
      if (!str('region'))
        problems.push({ field: `${at}.region`, message: 'must be a non-empty string' });
      if (!str('bucket'))
        problems.push({ field: `${at}.bucket`, message: 'must be a non-empty string' });
      if (ctx['profile'] !== undefined && !str('profile'))
        problems.push({ field: `${at}.profile`, message: 'must be a non-empty string when set' });
      if (!secretsProvider || !(SECRETS_PROVIDERS as readonly string[]).includes(secretsProvider)) {
        problems.push({
          field: `${at}.secretsProvider`,
          message: `must be one of ${SECRETS_PROVIDERS.join(', ')}`,
        });
      }
      contexts[name] = ctx as unknown as ClusterContext;
    }
  }
  const current = obj['current'];
  if (current !== undefined && (typeof current !== 'string' || !(current in contexts))) {
    problems.push({ field: 'current', message: 'must name one of the saved contexts' });
  }
  if (problems.length > 0) {
    throw new ValidationError(`reading ${source}`, problems, {
      code: 'INVALID_ARGUMENT',
      hint: 'fix the file by hand, or remove it and run `podmin connect` again',
    });
  }
  return current === undefined ? { contexts } : { current: current as string, contexts };
}
