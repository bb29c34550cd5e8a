import path from 'node:path';
import { parseYamlStream, recognizedOrigin } from '@podmin/util-manifest';
import { PodminError } from '@podmin/util-errors';
import { parseDeploymentKey, parseServiceKey, serviceVip } from '@podmin/util-desired-state';
import {
  DirectoryPayloadCache,
  entriesOf,
  readIndex,
  readPayloads,
  type PayloadCache,
} from '@podmin/data-access-desired-state';
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

/** Options of {@link listDeployments}. */
export interface ListOptions {
  /** Verified payloads kept between commands (the CLI's `<cache>/payloads/sha512`). */
  cache?: PayloadCache;
  /** Payload reads in flight at once. */
  concurrency?: number;
}

/** The CLI's verified-payload cache, `<podmin cache>/payloads/sha512`, shared by its commands. */
export function payloadCacheIn(cacheDir: string): PayloadCache {
  return new DirectoryPayloadCache({ dir: path.join(cacheDir, 'payloads', 'sha512') });
}

/** What `list` shows of one Pod payload. */
interface PodSummary {
  namespace: string;
  origin: string | null;
}

/**
 * Reads the index and each referenced Pod payload (verified) into inventory rows, sorted;
 * `cluster` (the current context's) names each Service's VIP. Each distinct payload is read
 * once (from `options.cache` when it holds it) and parsed once, with bounded concurrency; a
 * payload that cannot be read or verified is never shown, only warned about.
 */
export async function listDeployments(
  store: Pick<DesiredStateStore, 'get'>,
  warn: (message: string) => void = () => undefined,
  cluster?: string,
  options: ListOptions = {},
): Promise<DeploymentSummary[]> {
  const index = entriesOf(await readIndex(store));
  const entries = Object.entries(index);
  const reads = await readPayloads(
    store,
    entries.map(([, entry]) => entry.pod),
    options,
  );
  // Parsed once per digest: keys sharing a digest share one Buffer, and at fleet size many
  // entries share one Pod.
  const parsed = new Map<Buffer, PodSummary | Error>();
  const summaryOf = (podKey: string): PodSummary | Error => {
    const read = reads.get(podKey);
    if (read === undefined || !read.ok) return asError(read?.error);
    let summary = parsed.get(read.body);
    if (summary === undefined) {
      summary = parsePodSummary(podKey, read.body);
      parsed.set(read.body, summary);
    }
    return summary;
  };
  const rows = entries.map(([key, entry]): DeploymentSummary => {
    const { nodegroup, name } = parseDeploymentKey(key);
    const svc = entry.service ? parseServiceKey(entry.service) : undefined;
    let namespace = svc?.namespace ?? 'default';
    let origin: string | null = null;
    const summary = summaryOf(entry.pod);
    if (summary instanceof Error) {
      // The reason names the payload key in most cases; name it once either way.
      const where = summary.message.includes(entry.pod) ? '' : ` (${entry.pod})`;
      warn(`reading the Pod payload of ${key}${where}: ${summary.message}`);
    } else {
      namespace = summary.namespace;
      origin = summary.origin;
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
  });
  // Code-unit order: the names are DNS-1123 labels, and localeCompare costs seconds at 10,000.
  const byCodeUnit = (x: string, y: string): number => (x < y ? -1 : x > y ? 1 : 0);
  return rows.sort((a, b) => byCodeUnit(a.nodegroup, b.nodegroup) || byCodeUnit(a.name, b.name));
}

function parsePodSummary(podKey: string, body: Buffer): PodSummary | Error {
  try {
    // Strict YAML (duplicate keys, aliases, extra documents refused). The inventory reads
    // only metadata, so it does not apply the agent's full Pod check.
    const [document, ...rest] = parseYamlStream(body.toString('utf8'), podKey);
    if (rest.length > 0) throw new Error('a payload holds exactly one YAML document');
    const pod = (document ?? {}) as { metadata?: { namespace?: string } };
    return {
      namespace: pod.metadata?.namespace ?? 'default',
      origin: recognizedOrigin(pod) ?? null,
    };
  } catch (err) {
    return asError(err);
  }
}

function asError(err: unknown): Error {
  if (err instanceof PodminError || err instanceof Error) return err;
  return new Error(String(err));
}
