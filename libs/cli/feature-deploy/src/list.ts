import { parseYamlStream, recognizedOrigin } from '@podmin/util-manifest';
import { PodminError } from '@podmin/util-errors';
import { parseDeploymentKey, parseServiceKey, serviceVip } from '@podmin/util-desired-state';
import { entriesOf, readIndex, readPayload } from '@podmin/data-access-desired-state';
import type { DesiredStateStore } from './desired-state.ports';

/** One committed deployment as `podmin list` shows it. */
export interface DeploymentSummary {
  name: string;
  namespace: string;
  nodegroup: string;
  /** `<service>` when the deployment has a Service. */
  service: string | null;
  /** A recognised built-in install origin, e.g. `install/cloudflared`. */
  origin: string | null;
  pod: string;
  servicePath: string | null;
  /** The Service's VIP in `cluster` (null without a Service or without a cluster name). */
  vip: string | null;
}

/**
 * Reads the index and each referenced Pod payload (verified) into inventory rows, sorted;
 * `cluster` (the current context's) names each Service's VIP.
 */
export async function listDeployments(
  store: Pick<DesiredStateStore, 'get'>,
  warn: (message: string) => void = () => undefined,
  cluster?: string,
): Promise<DeploymentSummary[]> {
  const index = entriesOf(await readIndex(store));
  const rows = await Promise.all(
    Object.entries(index).map(async ([key, entry]): Promise<DeploymentSummary> => {
      const { nodegroup, name } = parseDeploymentKey(key);
      const svc = entry.service ? parseServiceKey(entry.service) : undefined;
      let namespace = svc?.namespace ?? 'default';
      let origin: string | null = null;
      try {
        const body = await readPayload(store, entry.pod);
        // Strict YAML (duplicate keys, aliases, extra documents refused). The inventory reads
        // only metadata, so it does not apply the agent's full Pod check.
        const [document, ...rest] = parseYamlStream(body.toString('utf8'), entry.pod);
        if (rest.length > 0) throw new Error('a payload holds exactly one YAML document');
        const pod = (document ?? {}) as { metadata?: { namespace?: string } };
        namespace = pod.metadata?.namespace ?? 'default';
        origin = recognizedOrigin(pod) ?? null;
      } catch (err) {
        const why = err instanceof PodminError || err instanceof Error ? err.message : String(err);
        warn(`reading the Pod payload of ${key}: ${why}`);
      }
      return {
        name,
        namespace,
        nodegroup,
        service: svc ? svc.service : null,
        origin,
        pod: entry.pod,
        servicePath: entry.service ?? null,
        vip: svc && cluster ? serviceVip(cluster, svc.namespace, svc.service) : null,
      };
    }),
  );
  return rows.sort(
    (a, b) => a.nodegroup.localeCompare(b.nodegroup) || a.name.localeCompare(b.name),
  );
}
