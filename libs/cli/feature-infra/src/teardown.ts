import fsp from 'node:fs/promises';
import path from 'node:path';
import { PodminError, hasCode } from '@podmin/util-errors';
import { writeWorkDir } from '@podmin/cli-data-access-infra-engine';
import {
  MAX_TFVARS_BYTES,
  TFVARS_FILE_NAME,
  TFVARS_OBJECT_KEY,
  parseModuleVars,
  serializeModuleVars,
} from '@podmin/cli-util-infra';
import type { DestroyDeps, InfraDeps } from './infra.ports';
import {
  TEARDOWN_PLAN,
  assertCanConfirm,
  checkEngine,
  confirmOrCancel,
  initBackend,
  stateExists,
  withLockRecovery,
} from './engine-run';

/**
 * The module inputs of the last setup: the bucket's copy (which survives `disconnect`), else
 * the work directory's; undefined when setup never wrote any.
 */
async function lastModuleInputs(deps: InfraDeps): Promise<string | undefined> {
  try {
    const { body } = await deps.store.get(TFVARS_OBJECT_KEY, { maxBytes: MAX_TFVARS_BYTES });
    const text = body.toString('utf8');
    return serializeModuleVars(parseModuleVars(text, TFVARS_OBJECT_KEY, deps.cluster));
  } catch (err) {
    if (!hasCode(err, 'OBJECT_NOT_FOUND')) throw err;
  }
  const local = path.join(deps.engine.workDir, TFVARS_FILE_NAME);
  try {
    const text = await fsp.readFile(local, 'utf8');
    return serializeModuleVars(parseModuleVars(text, local, deps.cluster));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * Destroys the compute and networking through the engine: restores the module and its inputs
 * (from the bucket after a `disconnect`), plans the destruction, confirms unless `confirmed`,
 * and applies. Returns false when there was nothing to destroy.
 */
async function destroyInfrastructure(deps: InfraDeps, confirmed: boolean): Promise<boolean> {
  const doing = `tearing down ${deps.cluster}`;
  const tfvars = await lastModuleInputs(deps);
  if (tfvars === undefined) {
    if (await stateExists(deps)) {
      throw new PodminError(
        'NOT_FOUND',
        `${doing}: the bucket holds engine state but no ${TFVARS_OBJECT_KEY}`,
        { hint: 'run podmin setup again with the same flags to restore the inputs, then teardown' },
      );
    }
    deps.reporter.info(`${deps.cluster} has no infrastructure to tear down`);
    return false;
  }
  await checkEngine(deps);
  await writeWorkDir(deps.engine.workDir, deps.moduleFiles, tfvars);
  await withLockRecovery(deps, () => initBackend(deps));
  const changes = await withLockRecovery(deps, () =>
    deps.engine.plan(TEARDOWN_PLAN, { destroy: true }),
  );
  if (!changes) {
    deps.reporter.info(`${deps.cluster} has no infrastructure left to tear down`);
    return false;
  }
  if (!confirmed) {
    await confirmOrCancel(
      deps,
      `Destroy the compute and networking of ${deps.cluster} shown above?`,
      doing,
    );
  }
  await withLockRecovery(deps, () => deps.engine.apply(TEARDOWN_PLAN));
  return true;
}

/** `podmin teardown` on AWS: destroys compute and networking; bucket, context and CAs stay. */
export async function teardownAwsCluster(deps: InfraDeps): Promise<void> {
  assertCanConfirm(deps, `tearing down ${deps.cluster}`);
  if (await destroyInfrastructure(deps, false)) {
    deps.reporter.info(
      `Tore down ${deps.cluster}; its bucket, context and CA secrets are kept (podmin setup restores it)`,
    );
  }
}

/**
 * `podmin destroy` on AWS: after one confirmation, destroys the infrastructure, deletes both
 * CA secrets, empties and deletes the bucket, and only then removes the context.
 */
export async function destroyAwsCluster(deps: DestroyDeps): Promise<void> {
  const doing = `destroying ${deps.cluster}`;
  assertCanConfirm(deps, doing);
  await confirmOrCancel(
    deps,
    `Destroy ${deps.cluster} for good: its infrastructure, both CA secrets, and bucket ${deps.bucket} with every object in it?`,
    doing,
  );
  await destroyInfrastructure(deps, true);
  await deps.deleteSystemSecrets();
  deps.reporter.info('Deleted the workload CA key and the cluster CA');
  let deleted = 0;
  for (;;) {
    const page = await deps.store.list('');
    if (page.objects.length === 0) break;
    for (const object of page.objects) {
      await deps.store.delete(object.key);
      deleted++;
    }
  }
  await deps.deleteBucket();
  deps.reporter.info(`Deleted ${deleted} object(s) and the bucket ${deps.bucket}`);
  await deps.removeContext();
  deps.reporter.info(`Destroyed ${deps.cluster} and removed its context`);
}
