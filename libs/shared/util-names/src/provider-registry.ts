import { PodminError } from '@podmin/util-errors';

/**
 * Provider implementations by name: the one place a provider name from a flag or a saved
 * context becomes an implementation, so adding a provider means adding one entry.
 */
export class ProviderRegistry<T> {
  private readonly entries: ReadonlyMap<string, T>;

  constructor(entries: Readonly<Record<string, T>>) {
    this.entries = new Map(Object.entries(entries));
  }

  /** The known provider names, in registration order (what errors and `--help` list). */
  get names(): readonly string[] {
    return [...this.entries.keys()];
  }

  /** Whether `name` is a known provider. */
  has(name: string): boolean {
    return this.entries.has(name);
  }

  /** The implementation of `name`; INVALID_ARGUMENT naming the known providers otherwise. */
  get(name: string, doing = `choosing provider ${JSON.stringify(name)}`): T {
    const entry = this.entries.get(name);
    if (entry === undefined) {
      throw new PodminError(
        'INVALID_ARGUMENT',
        `${doing}: unknown provider ${JSON.stringify(name)}; known providers: ${this.names.join(', ')}`,
      );
    }
    return entry;
  }
}
