import fs from 'node:fs/promises';
import { PodminError } from '@podmin/util-errors';
import { withFileLock, writeFileAtomic, type FileLockOptions } from '@podmin/util-fs';
import {
  DAY_MS,
  assertRecoverySupported,
  assertValueAllowed,
  scheduledForDeletionError,
} from './provider-rules';
import { secretExistsError, secretNotFoundError } from './secret-errors';
import { assertSecretPrefix, parseSecretName } from './secret-names';
import {
  SECRET_PROVIDERS,
  type CreateSecretOptions,
  type SecretProviderName,
  type SecretStore,
} from './secret-store.port';

/** One stored secret in the local file. */
interface LocalEntry {
  /** The value, base64. */
  value: string;
  created: string;
  updated: string;
  description?: string;
  /** When a scheduled deletion becomes final (ISO 8601); absent for a live secret. */
  deletionDate?: string;
}

/** The whole local secrets file: entries by provider, then by name. */
interface LocalDocument {
  version: 1;
  providers: Record<SecretProviderName, Record<string, LocalEntry>>;
}

/** Settings of the local file-backed store. */
export interface LocalSecretStoreOptions {
  /** The JSON file holding every secret of the cluster, e.g. `<data>/secrets/<cluster>.json`. */
  file: string;
  /** Which provider's names and rules this view serves. */
  provider: SecretProviderName;
  /** Clock for recovery windows (injected in tests). */
  now?: () => Date;
  /** Lock timing for concurrent writers. */
  lock?: Pick<FileLockOptions, 'timeoutMs' | 'staleMs'>;
}

const ENTRY_FIELDS = new Set(['value', 'created', 'updated', 'description', 'deletionDate']);
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/**
 * The `local` provider's store: one JSON file (mode 0600, rewritten by temp file + fsync + rename
 * under a lock file) that serves both provider names with their rules, so a manifest written
 * for AWS runs unchanged on a local cluster. Secrets Manager deletions keep the value until the
 * 30-day recovery window has passed on the injected clock.
 */
export class LocalSecretStore implements SecretStore {
  readonly provider: SecretProviderName;
  private readonly file: string;
  private readonly now: () => Date;
  private readonly lock: FileLockOptions;

  constructor(options: LocalSecretStoreOptions) {
    this.file = options.file;
    this.provider = options.provider;
    this.now = options.now ?? (() => new Date());
    this.lock = { timeoutMs: 10_000, staleMs: 30_000, ...options.lock };
  }

  async create(name: string, value: Buffer, options: CreateSecretOptions = {}): Promise<void> {
    parseSecretName(name);
    assertValueAllowed(this.provider, name, value);
    const doing = `creating ${name} in ${this.provider}`;
    await this.mutate((entries, now) => {
      const existing = entries[name];
      if (existing?.deletionDate !== undefined) {
        throw scheduledForDeletionError(doing, name, {
          deletionDate: new Date(existing.deletionDate),
        });
      }
      if (existing !== undefined) {
        throw secretExistsError(doing, 'secret');
      }
      entries[name] = {
        value: value.toString('base64'),
        created: now.toISOString(),
        updated: now.toISOString(),
        ...(options.description === undefined ? {} : { description: options.description }),
      };
    });
  }

  async update(name: string, value: Buffer): Promise<void> {
    parseSecretName(name);
    assertValueAllowed(this.provider, name, value);
    const doing = `updating ${name} in ${this.provider}`;
    await this.mutate((entries, now) => {
      const entry = this.live(entries, name, doing);
      entry.value = value.toString('base64');
      entry.updated = now.toISOString();
    });
  }

  async get(name: string): Promise<Buffer> {
    parseSecretName(name);
    const doc = await this.read();
    const entries = this.entriesAt(doc, this.now());
    return Buffer.from(
      this.live(entries, name, `reading ${name} from ${this.provider}`).value,
      'base64',
    );
  }

  async exists(name: string): Promise<boolean> {
    parseSecretName(name);
    const entries = this.entriesAt(await this.read(), this.now());
    if (entries[name] === undefined) return false;
    this.live(entries, name, `checking ${name} in ${this.provider}`);
    return true;
  }

  async list(prefix: string): Promise<string[]> {
    assertSecretPrefix(prefix);
    const entries = this.entriesAt(await this.read(), this.now());
    return Object.entries(entries)
      .filter(([name, entry]) => name.startsWith(prefix) && entry.deletionDate === undefined)
      .map(([name]) => name)
      .sort();
  }

  async delete(name: string): Promise<void> {
    parseSecretName(name);
    const days = assertRecoverySupported(this.provider, 'delete', name);
    const doing = `deleting ${name} in ${this.provider}`;
    await this.mutate((entries, now) => {
      const entry = this.live(entries, name, doing);
      entry.deletionDate = new Date(now.getTime() + days * DAY_MS).toISOString();
    });
  }

  async restore(name: string): Promise<void> {
    parseSecretName(name);
    assertRecoverySupported(this.provider, 'restore', name);
    await this.mutate((entries) => {
      const entry = entries[name];
      if (entry === undefined)
        throw secretNotFoundError(`restoring ${name} in ${this.provider}`, 'secret');
      delete entry.deletionDate;
    });
  }

  async destroy(name: string): Promise<void> {
    parseSecretName(name);
    await this.mutate((entries) => {
      if (entries[name] === undefined)
        throw secretNotFoundError(`destroying ${name} in ${this.provider}`, 'secret');
      delete entries[name];
    });
  }

  /** A live entry, or NOT_FOUND / scheduled-for-deletion. */
  private live(entries: Record<string, LocalEntry>, name: string, doing: string): LocalEntry {
    const entry = entries[name];
    if (entry === undefined) throw secretNotFoundError(doing, 'secret');
    if (entry.deletionDate !== undefined) {
      throw scheduledForDeletionError(doing, name, { deletionDate: new Date(entry.deletionDate) });
    }
    return entry;
  }

  /** This provider's entries with every deletion whose window has passed removed. */
  private entriesAt(doc: LocalDocument, now: Date): Record<string, LocalEntry> {
    const entries = doc.providers[this.provider];
    for (const [name, entry] of Object.entries(entries)) {
      if (entry.deletionDate !== undefined && Date.parse(entry.deletionDate) <= now.getTime()) {
        delete entries[name];
      }
    }
    return entries;
  }

  private async mutate(
    change: (entries: Record<string, LocalEntry>, now: Date) => void,
  ): Promise<void> {
    await withFileLock(
      `${this.file}.lock`,
      `updating ${this.file}`,
      async () => {
        const doc = await this.read();
        const now = this.now();
        change(this.entriesAt(doc, now), now);
        await writeFileAtomic(this.file, serialise(doc), { mode: 0o600 });
      },
      this.lock,
    );
  }

  private async read(): Promise<LocalDocument> {
    let text: string;
    try {
      text = await fs.readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return emptyDocument();
      throw new PodminError('IO_ERROR', `reading ${this.file}: ${(err as Error).message}`, {
        cause: err,
      });
    }
    return parseDocument(text, this.file);
  }
}

function emptyDocument(): LocalDocument {
  return { version: 1, providers: { 'aws-parameter-store': {}, 'aws-secrets-manager': {} } };
}

/** Canonical JSON: providers and names in sorted order, so the file is deterministic. */
function serialise(doc: LocalDocument): string {
  const providers: Record<string, Record<string, LocalEntry>> = {};
  for (const provider of SECRET_PROVIDERS) {
    const entries = doc.providers[provider];
    const sorted: Record<string, LocalEntry> = {};
    for (const name of Object.keys(entries).sort()) {
      const e = entries[name] as LocalEntry;
      sorted[name] = {
        created: e.created,
        ...(e.deletionDate === undefined ? {} : { deletionDate: e.deletionDate }),
        ...(e.description === undefined ? {} : { description: e.description }),
        updated: e.updated,
        value: e.value,
      };
    }
    providers[provider] = sorted;
  }
  return JSON.stringify({ providers, version: 1 }, null, 2) + '\n';
}

/** Strictly parses the secrets file; a damaged file is an IO_ERROR, never silently emptied. */
function parseDocument(text: string, file: string): LocalDocument {
  const bad = (why: string, cause?: unknown): PodminError =>
    new PodminError('IO_ERROR', `reading ${file}: ${why}`, {
      ...(cause === undefined ? {} : { cause }),
      hint: 'the local secrets file is damaged; restore it from a backup or fix it by hand',
    });
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw bad('not valid JSON', err);
  }
  if (!isObject(raw) || raw['version'] !== 1 || !isObject(raw['providers'])) {
    throw bad('expected {"version": 1, "providers": {...}}');
  }
  const doc = emptyDocument();
  for (const [provider, entries] of Object.entries(raw['providers'])) {
    if (!(SECRET_PROVIDERS as readonly string[]).includes(provider) || !isObject(entries)) {
      throw bad(`unknown provider section ${JSON.stringify(provider)}`);
    }
    for (const [name, entry] of Object.entries(entries)) {
      if (
        !isValidName(name) ||
        !isObject(entry) ||
        Object.keys(entry).some((k) => !ENTRY_FIELDS.has(k)) ||
        typeof entry['value'] !== 'string' ||
        !isIso(entry['created']) ||
        !isIso(entry['updated']) ||
        (entry['deletionDate'] !== undefined && !isIso(entry['deletionDate'])) ||
        (entry['description'] !== undefined && typeof entry['description'] !== 'string')
      ) {
        throw bad(`entry ${JSON.stringify(name)} of ${provider} is malformed`);
      }
      doc.providers[provider as SecretProviderName][name] = entry as unknown as LocalEntry;
    }
  }
  return doc;
}

function isValidName(name: string): boolean {
  try {
    parseSecretName(name);
    return true;
  } catch {
    return false;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isIso(value: unknown): boolean {
  return typeof value === 'string' && ISO.test(value);
}
