import {
  putPayload,
  updateIndex,
  type DesiredStateStore,
  type IndexSigning,
} from '@podmin/data-access-desired-state';
import {
  deploymentKey,
  podPayloadKey,
  servicePayloadKey,
  withDeployment,
  withoutDeployment,
  type DesiredIndex,
  type IndexEntry,
} from '@podmin/util-desired-state';

/** One deployment's canonical payloads (a `buildDeployment` result fits). */
export interface TestDeployment {
  name: string;
  nodegroup: string;
  podYaml: string;
  service?: { name: string; namespace: string; yaml: string };
}

/** A change to commit: deployments to (re)deploy, raw entries to set, index keys to remove. */
export interface DesiredStateChange {
  deploy?: readonly TestDeployment[];
  /** Entries pointing at payloads the test wrote itself (e.g. tampered ones). */
  entries?: Readonly<Record<string, IndexEntry>>;
  remove?: readonly string[];
}

/** How {@link commitDesiredState} writes the index. */
export interface CommitDesiredStateOptions {
  /** Sign the index as this trusted deployer (as a deploy with a signer does); default unsigned. */
  signing?: IndexSigning;
}

/**
 * Commits desired state the way `deploy` and `delete` do, through
 * `@podmin/data-access-desired-state`: payloads create-only, then one compare-and-swap of the
 * index (ownership rules enforced), signed when `options.signing` is given (unsigned otherwise,
 * dropping a signature the index carried). Returns the committed index.
 */
export async function commitDesiredState(
  store: DesiredStateStore,
  change: DesiredStateChange,
  options: CommitDesiredStateOptions = {},
): Promise<DesiredIndex> {
  const entries: Record<string, IndexEntry> = { ...change.entries };
  for (const d of change.deploy ?? []) {
    const entry: IndexEntry = { pod: podPayloadKey(d.nodegroup, d.podYaml) };
    await putPayload(store, entry.pod, d.podYaml);
    if (d.service) {
      entry.service = servicePayloadKey(d.service.namespace, d.service.name, d.service.yaml);
      await putPayload(store, entry.service, d.service.yaml);
    }
    entries[deploymentKey(d.nodegroup, d.name)] = entry;
  }
  let committed: DesiredIndex = {};
  await updateIndex(
    store,
    (index) => {
      let next = index;
      for (const key of change.remove ?? []) next = withoutDeployment(next, key);
      for (const [key, entry] of Object.entries(entries)) next = withDeployment(next, key, entry);
      committed = next;
      return next;
    },
    {
      backoff: () => Promise.resolve(),
      ...(options.signing === undefined ? {} : { signing: options.signing }),
    },
  );
  return committed;
}
