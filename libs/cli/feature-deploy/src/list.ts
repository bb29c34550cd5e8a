import path from 'node:path';
import { parseYamlStream, recognizedOrigin } from '@podmin/util-manifest';
import { PodminError } from '@podmin/util-errors';
import { parseDeploymentKey, parseServiceKey, serviceVip } from '@podmin/util-desired-state';
import {
  DirectoryPayloadCache,
  entriesOf,
  payloadDigest,
  readIndex,
  readPayloads,
  type PayloadCache,
} from '@podmin/data-access-desired-state';
import type { DesiredStateStore } from './desired-state.ports';
import type { PodSummary, SummaryCache } from './list-summaries';

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
  /**
   * Verified payloads kept between commands (the CLI's `<cache>/payloads/sha512`): read first,
   * and written only without `summaries`.
   */
  cache?: PayloadCache;
  /** Payload reads in flight at once. */
  concurrency?: number;
  /** Summaries of payloads read before (the CLI's `<cache>/list/summaries.json`). */
  summaries?: SummaryCache;
}

/** The CLI's verified-payload cache, `<podmin cache>/payloads/sha512`, shared by its commands. */
export function payloadCacheIn(cacheDir: string): PayloadCache {
  return new DirectoryPayloadCache({ dir: path.join(cacheDir, 'payloads', 'sha512') });
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
  // A digest summarised before needs no read; only the others are fetched (or taken from the
  // payload cache) and parsed, once per digest.
  const known = (await options.summaries?.load()) ?? new Map<string, PodSummary>();
  const reads = await readPayloads(
    store,
    entries.map(([, entry]) => entry.pod).filter((pod) => !known.has(payloadDigest(pod) ?? '')),
    { ...options, cache: listReads(options) },
  );
  const fresh = new Map<string, PodSummary>();
  const summaryOf = (podKey: string): PodSummary | Error => {
    const digest = payloadDigest(podKey);
    const summary = digest === undefined ? undefined : (known.get(digest) ?? fresh.get(digest));
    if (summary !== undefined) return summary;
    const read = reads.get(podKey);
    if (read === undefined || !read.ok) return asError(read?.error);
    const parsed = parsePodSummary(podKey, read.body);
    if (digest !== undefined && !(parsed instanceof Error)) fresh.set(digest, parsed);
    return parsed;
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
  if (options.summaries !== undefined)
    await keepSummaries(options.summaries, entries, known, fresh);
  // Code-unit order: the names are DNS-1123 labels, and localeCompare costs seconds at 10,000.
  const byCodeUnit = (x: string, y: string): number => (x < y ? -1 : x > y ? 1 : 0);
  return rows.sort((a, b) => byCodeUnit(a.nodegroup, b.nodegroup) || byCodeUnit(a.name, b.name));
}

/**
 * The payload cache as list uses it: read from, and written only when list keeps no summaries.
 * With summaries, a later list needs the summary, not the bytes, so a cold list of 10,000
 * entries does not write 10,000 files (a quarter of its CPU on the S3 emulator, where the
 * CLI's CPU sets the pace); commands that read a few payloads still fill the cache.
 */
function listReads(options: ListOptions): PayloadCache | undefined {
  const { cache } = options;
  if (cache === undefined || options.summaries === undefined) return cache;
  return { get: (digest) => cache.get(digest), put: () => Promise.resolve() };
}

/**
 * Saves the summaries of the digests the index still names, when that set differs from what
 * was loaded. A cache that cannot be written only costs the next run its reads.
 */
async function keepSummaries(
  cache: SummaryCache,
  entries: ReadonlyArray<readonly [string, { pod: string }]>,
  known: ReadonlyMap<string, PodSummary>,
  fresh: ReadonlyMap<string, PodSummary>,
): Promise<void> {
  const keep = new Map<string, PodSummary>();
  for (const [, entry] of entries) {
    const digest = payloadDigest(entry.pod);
    if (digest === undefined || keep.has(digest)) continue;
    const summary = known.get(digest) ?? fresh.get(digest);
    if (summary !== undefined) keep.set(digest, summary);
  }
  if (fresh.size === 0 && keep.size === known.size) return;
  await cache.save(keep).catch(() => undefined);
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
