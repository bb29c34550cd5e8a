import semver from 'semver';
import { PodminError } from '@podmin/util-errors';

/** The oldest OpenTofu/Terraform the module supports. */
export const MIN_ENGINE_VERSION = '1.11.0';

/**
 * Reads the version from `<engine> -version -json` (OpenTofu and Terraform both print
 * `terraform_version`) and requires at least {@link MIN_ENGINE_VERSION}.
 */
export function parseEngineVersion(output: string, executable: string): string {
  let version: unknown;
  try {
    version = (JSON.parse(output) as { terraform_version?: unknown }).terraform_version;
  } catch (err) {
    throw new PodminError(
      'INVALID_ARGUMENT',
      `checking OpenTofu/Terraform (${executable}): \`-version -json\` did not print JSON`,
      { cause: err, hint: 'set PODMIN_TF_CMD to an OpenTofu or Terraform 1.11+ executable' },
    );
  }
  const parsed = typeof version === 'string' ? semver.coerce(version) : null;
  if (parsed === null) {
    throw new PodminError(
      'INVALID_ARGUMENT',
      `checking OpenTofu/Terraform (${executable}): no version in its \`-version -json\` output`,
      { hint: 'set PODMIN_TF_CMD to an OpenTofu or Terraform 1.11+ executable' },
    );
  }
  if (semver.lt(parsed, MIN_ENGINE_VERSION)) {
    throw new PodminError(
      'INVALID_ARGUMENT',
      `checking OpenTofu/Terraform (${executable}): version ${String(version)} is older than the required 1.11`,
      { hint: 'install OpenTofu or Terraform 1.11 or newer, or point PODMIN_TF_CMD at one' },
    );
  }
  return String(version);
}

// eslint-disable-next-line no-control-regex -- ESC starts the colour codes being removed
const ANSI_SGR = /\x1b\[[0-9;]*m/g;

/**
 * Finds the lock ID in an engine's "Error acquiring the state lock" output (its `Lock Info:`
 * block), or undefined when the output is not a lock error.
 */
export function stateLockId(output: string): string | undefined {
  // Colour codes and the diagnostic box drawing of a TTY run are not part of the message.
  const plain = output.replace(ANSI_SGR, '').replace(/[│╷╵]/g, '');
  if (!/acquiring the state lock/i.test(plain)) return undefined;
  const match = /Lock Info:\s*\n\s*ID:\s*(\S+)/.exec(plain);
  return match?.[1];
}
