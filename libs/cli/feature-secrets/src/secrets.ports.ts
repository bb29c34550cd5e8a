import type { ClusterContext } from '@podmin/cli-util-config';
import type { Reporter } from '@podmin/cli-util-io';
import type { SecretProviderName, SecretStore } from '@podmin/data-access-secrets';

/** Opens the store of one provider for the current context. */
export type SecretStoreOpener = (provider: SecretProviderName) => Promise<SecretStore>;

/** Where a secret value comes from: stdin, a file, or a hidden prompt on the terminal. */
export interface SecretValueInput {
  /** True when a person can be asked (stdin is a terminal). */
  readonly interactive: boolean;
  /** Reads all of stdin. */
  readStdin(): Promise<Buffer>;
  /** Reads a whole file. */
  readFile(file: string): Promise<Buffer>;
  /** Asks for a value without echoing it; only when `interactive`. */
  promptHidden(question: string): Promise<Buffer>;
}

/** What the secret commands need from the CLI shell. */
export interface SecretsDeps {
  reporter: Reporter;
  /** The current context (these commands need one). */
  context: ClusterContext;
  openStore: SecretStoreOpener;
  input: SecretValueInput;
}
