// Hand-written fakes of the narrow ports of this library, for its unit specs only.
import {
  assertRecoverySupported,
  assertSecretPrefix,
  assertValueAllowed,
  parseSecretName,
  scheduledForDeletionError,
  type SecretProviderName,
  type SecretStore,
} from '@podmin/data-access-secrets';
import type { ClusterContext } from '@podmin/cli-util-config';
import { PodminError } from '@podmin/util-errors';
import type { SecretValueInput } from '../secrets.ports';

/** An in-memory SecretStore applying the shared provider rules; `deleted` marks scheduled deletions. */
export class InMemorySecretStore implements SecretStore {
  readonly values = new Map<string, Buffer>();
  readonly deleted = new Set<string>();
  /** When set, every call fails with it. */
  failure: Error | undefined;

  constructor(readonly provider: SecretProviderName) {}

  private check(): void {
    if (this.failure) throw this.failure;
  }

  create(name: string, value: Buffer): Promise<void> {
    return this.run(() => {
      parseSecretName(name);
      assertValueAllowed(this.provider, name, value);
      if (this.deleted.has(name)) throw scheduledForDeletionError('creating', name);
      if (this.values.has(name))
        throw new PodminError('ALREADY_EXISTS', `creating ${name}: exists`);
      this.values.set(name, Buffer.from(value));
    });
  }
  update(name: string, value: Buffer): Promise<void> {
    return this.run(() => {
      assertValueAllowed(this.provider, name, value);
      this.live(name);
      this.values.set(name, Buffer.from(value));
    });
  }
  get(name: string): Promise<Buffer> {
    return this.run(() => this.live(name));
  }
  exists(name: string): Promise<boolean> {
    return this.run(() => {
      parseSecretName(name);
      if (!this.values.has(name)) return false;
      this.live(name);
      return true;
    });
  }
  list(prefix: string): Promise<string[]> {
    return this.run(() => {
      assertSecretPrefix(prefix);
      return [...this.values.keys()]
        .filter((n) => n.startsWith(prefix) && !this.deleted.has(n))
        .sort();
    });
  }
  delete(name: string): Promise<void> {
    return this.run(() => {
      assertRecoverySupported(this.provider, 'delete', name);
      this.live(name);
      this.deleted.add(name);
    });
  }
  restore(name: string): Promise<void> {
    return this.run(() => {
      assertRecoverySupported(this.provider, 'restore', name);
      if (!this.values.has(name)) throw new PodminError('NOT_FOUND', `restoring ${name}: missing`);
      this.deleted.delete(name);
    });
  }
  destroy(name: string): Promise<void> {
    return this.run(() => {
      if (!this.values.delete(name))
        throw new PodminError('NOT_FOUND', `destroying ${name}: missing`);
      this.deleted.delete(name);
    });
  }

  private live(name: string): Buffer {
    const value = this.values.get(name);
    if (value === undefined) throw new PodminError('NOT_FOUND', `${name}: missing`);
    if (this.deleted.has(name)) throw scheduledForDeletionError('reading', name);
    return value;
  }

  private run<T>(fn: () => T): Promise<T> {
    return Promise.resolve().then(() => {
      this.check();
      return fn();
    });
  }
}

/** A SecretValueInput answering from fixed values; records which source was used. */
export class FakeValueInput implements SecretValueInput {
  readonly used: string[] = [];
  constructor(
    readonly interactive: boolean,
    private readonly values: {
      stdin?: string | Buffer;
      files?: Record<string, string | Buffer>;
      typed?: string;
    } = {},
  ) {}
  readStdin(): Promise<Buffer> {
    this.used.push('stdin');
    return Promise.resolve(Buffer.from(this.values.stdin ?? ''));
  }
  readFile(file: string): Promise<Buffer> {
    this.used.push(`file:${file}`);
    const value = this.values.files?.[file];
    return value === undefined
      ? Promise.reject(new PodminError('INVALID_ARGUMENT', `reading ${file}: missing`))
      : Promise.resolve(Buffer.from(value));
  }
  promptHidden(question: string): Promise<Buffer> {
    this.used.push(`prompt:${question}`);
    return Promise.resolve(Buffer.from(this.values.typed ?? ''));
  }
}

/** A saved context for cluster `demo`. */
export function demoContext(overrides: Partial<ClusterContext> = {}): ClusterContext {
  return {
    cluster: 'demo',
    provider: 'local',
    region: 'local',
    bucket: '/tmp/bucket',
    secretsProvider: 'aws-parameter-store',
    ...overrides,
  };
}
