import type { Reporter } from '@podmin/cli-util-io';
import type { Deployment } from '@podmin/util-manifest';
import { deploymentKey } from '@podmin/util-desired-state';
import {
  commitDeployment,
  historyWarning,
  type CommitOptions,
  type CommitResult,
  type DeploymentPayloads,
} from './commit';
import type { DesiredStateStore } from './desired-state.ports';
import { ImageIndexReads, pinPod } from './pin';

/** What `podmin deploy` runs around the commit, each step supplied by the caller. */
export interface DeployDeps {
  /** Renders and validates the deployment (feature-manifest's `prepareDeployment`). */
  prepare(): Promise<Deployment>;
  /** Opens the current context's bucket; called only once the deployment is valid. */
  openBucket(): Promise<{ context: { cluster: string }; store: DesiredStateStore }>;
  /** Where warnings, the outcome and the committed key go. */
  reporter: Pick<Reporter, 'info' | 'warn' | 'result'>;
  /**
   * Deploy's preflight against the opened bucket (`assertPreflight`), returning its warnings;
   * absent with `--no-preflight`. It runs beside the commit's index read and is awaited before
   * the first write, so a refusal writes nothing.
   */
  preflight?(
    deployment: Deployment,
    store: DesiredStateStore,
    reads: ImageIndexReads,
  ): Promise<string[]>;
  /** Loads what the preflight will use (`preparePreflight`), before any request is sent. */
  preparePreflight?(deployment: Deployment): Promise<void>;
  /**
   * Pin every tag reference by digest before the commit (default true; `--no-pin` sets false,
   * which keeps tags: unsafe, a bucket writer who moves a tag changes what runs). The digests
   * come from the repository `index.json` reads the preflight makes; without a preflight,
   * pinning makes them itself, one per distinct repository, in parallel.
   */
  pin?: boolean;
}

/** The payloads {@link commitDeployment} stores for a validated deployment. */
export function deploymentPayloads(
  deployment: Pick<Deployment, 'name' | 'nodegroup' | 'podYaml' | 'service'>,
): DeploymentPayloads {
  const { name, nodegroup, podYaml, service } = deployment;
  return {
    name,
    nodegroup,
    podYaml,
    ...(service
      ? { service: { name: service.name, namespace: service.namespace, yaml: service.yaml } }
      : {}),
  };
}

/**
 * `podmin deploy`: prepares the deployment, shows its warnings, opens the bucket (a rejected
 * manifest opens nothing), commits it and reports what was committed. Success means desired
 * state is committed, not that a Pod runs.
 */
export async function deploy(deps: DeployDeps, options: CommitOptions = {}): Promise<CommitResult> {
  const deployment = await deps.prepare();
  for (const warning of deployment.warnings) deps.reporter.warn(warning);
  if (deps.preflight !== undefined) await deps.preparePreflight?.(deployment);
  const { context, store } = await deps.openBucket();
  const reads = new ImageIndexReads(store);
  const checking = deps.preflight?.(deployment, store, reads);
  // Observed at once, so a refusal that arrives while the index is read is not unhandled.
  checking?.catch(() => undefined);
  let payloads = deploymentPayloads(deployment);
  if (deps.pin !== false) {
    const doing = `deploying ${deploymentKey(deployment.nodegroup, deployment.name)}`;
    let pinned: Awaited<ReturnType<typeof pinPod>>;
    try {
      pinned = await pinPod(reads, deployment.pod, doing);
    } catch (err) {
      // The preflight's refusal names everything wrong at once: it goes first.
      await checking;
      throw err;
    }
    if (pinned !== undefined) payloads = { ...payloads, podYaml: pinned.podYaml };
  }
  const beforeWrite = async (): Promise<void> => {
    for (const warning of (await checking) ?? []) deps.reporter.warn(warning);
  };
  let reported = false;
  const result = await commitDeployment(store, payloads, {
    ...options,
    ...(checking === undefined
      ? {}
      : {
          beforeWrite: async () => {
            if (reported) return;
            reported = true;
            await beforeWrite();
          },
        }),
  });
  for (const key of result.repaired)
    deps.reporter.warn(
      `Repaired ${key}: the object stored there did not match the digest its key names, so deploy rewrote it with the right bytes`,
    );
  const unrecorded = historyWarning(result.key, result.previous, result.history);
  if (unrecorded !== undefined) deps.reporter.warn(unrecorded);
  const what = result.changed ? 'Committed' : 'Already committed (unchanged)';
  deps.reporter.info(
    `${what}: ${result.key} in cluster ${context.cluster} desired state. Nodes in NodeGroup ${deployment.nodegroup} reconcile it asynchronously; this does not mean the Pod is running.`,
  );
  deps.reporter.result(result.key);
  return result;
}
