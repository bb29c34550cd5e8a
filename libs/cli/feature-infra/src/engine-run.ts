import { PodminError, hasCode } from '@podmin/util-errors';
import { StateLockedError } from '@podmin/cli-data-access-infra-engine';
import { TFSTATE_OBJECT_KEY } from '@podmin/cli-util-infra';
import type { InfraDeps } from './infra.ports';

/** Plan file names in the work directory. */
export const SETUP_PLAN = 'setup.tfplan';
export const TEARDOWN_PLAN = 'teardown.tfplan';

/**
 * Fails before anything runs when a confirmation will be needed and nobody can give it:
 * no TTY and no `-y`.
 */
export function assertCanConfirm(deps: InfraDeps, doing: string): void {
  if (!deps.assumeYes && !deps.interactive) {
    throw new PodminError(
      'INVALID_ARGUMENT',
      `${doing}: confirmation is required and there is no terminal to ask on`,
      { hint: 'run it in a terminal, or pass -y to confirm in advance' },
    );
  }
}

/** Asks unless `-y`; a "no" cancels with nothing applied. */
export async function confirmOrCancel(deps: InfraDeps, question: string, doing: string) {
  if (deps.assumeYes) return;
  if (!(await deps.reporter.confirm(question))) {
    throw new PodminError('INVALID_ARGUMENT', `${doing}: cancelled; nothing was changed`);
  }
}

/**
 * Runs an engine step; on a stale state lock tells the user, and on a TTY without `-y` offers
 * force-unlock and retries once. With `-y` it never forces: it prints the command instead.
 */
export async function withLockRecovery<T>(deps: InfraDeps, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    if (!(err instanceof StateLockedError)) throw err;
    const command = `${err.executable} -chdir=${err.workDir} force-unlock ${err.lockId}`;
    deps.reporter.warn(
      `the cluster state is locked (lock ID ${err.lockId}); another podmin run may be active, or an earlier one was interrupted`,
    );
    if (deps.assumeYes || !deps.interactive) {
      deps.reporter.info(`If no other run holds it, release it with: ${command}`);
      throw err;
    }
    if (!(await deps.reporter.confirm(`Force-unlock state lock ${err.lockId}?`))) throw err;
    await deps.engine.forceUnlock(err.lockId);
    deps.reporter.info(`Released state lock ${err.lockId}`);
    return step();
  }
}

/** `init` against the cluster bucket's state object, with the lockfile. */
export async function initBackend(deps: InfraDeps): Promise<void> {
  deps.reporter.info(`Initializing OpenTofu/Terraform in ${deps.engine.workDir}`);
  await deps.engine.init({
    bucket: deps.bucket,
    key: TFSTATE_OBJECT_KEY,
    region: deps.region,
    ...(deps.s3Endpoint === undefined ? {} : { endpoint: deps.s3Endpoint }),
  });
}

/** Checks and reports the engine's version (≥ 1.11). */
export async function checkEngine(deps: InfraDeps): Promise<void> {
  const version = await deps.engine.version();
  deps.reporter.info(`Using OpenTofu/Terraform ${version} (${deps.engine.executable})`);
}

/** Whether the bucket holds engine state. */
export async function stateExists(deps: InfraDeps): Promise<boolean> {
  try {
    await deps.store.head(TFSTATE_OBJECT_KEY);
    return true;
  } catch (err) {
    if (hasCode(err, 'OBJECT_NOT_FOUND')) return false;
    throw err;
  }
}
