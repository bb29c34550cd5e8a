import fs from 'node:fs/promises';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { PodminError } from '@podmin/util-errors';
import { criLines, type LogLine } from './cri-log';

/** The annotation the agent writes on every static Pod: the `<nodegroup>/<name>` it belongs to. */
export const DEPLOYMENT_ANNOTATION = 'podmin.dev/deployment';

/** Where kubelet writes container logs unless its `podLogsDir` says otherwise. */
export const DEFAULT_POD_LOG_DIR = '/var/log/pods';

/** One container of one static Pod on one node, and the directory kubelet logs it to. */
export interface PodLogSource {
  node: string;
  namespace: string;
  pod: string;
  container: string;
  /** `<podLogDir>/<namespace>_<pod>-<node>_<uid>/<container>`. */
  dir: string;
}

/** Which deployment's Pods to find on one node. */
export interface PodLogQuery {
  /** The node's static Pod directory (`<node root>/etc/podmin/manifests`). */
  manifestsDir: string;
  /** kubelet's Pod log directory (`/var/log/pods`). */
  podLogDir: string;
  /** The node name kubelet runs with (static Pod names end with `-<node name>`). */
  nodeName: string;
  nodegroup: string;
  name: string;
  /** Only this container (regular or init); default every regular container. */
  container?: string;
}

interface StaticPod {
  namespace: string;
  name: string;
  containers: string[];
  initContainers: string[];
}

async function deploymentPods(q: PodLogQuery): Promise<StaticPod[]> {
  let entries: string[];
  try {
    entries = await fs.readdir(q.manifestsDir);
  } catch (err) {
    throw new PodminError('NOT_FOUND', `reading the node's static Pods in ${q.manifestsDir}`, {
      cause: err,
      hint: 'Is the local node set up? Run `podmin setup` on this machine.',
    });
  }
  const key = `${q.nodegroup}/${q.name}`;
  const pods: StaticPod[] = [];
  for (const entry of entries.sort()) {
    // The agent writes `<pod>.yaml` through temporary files starting with a dot.
    if (!entry.endsWith('.yaml') || entry.startsWith('.')) continue;
    let doc: unknown;
    try {
      doc = parseYaml(await fs.readFile(path.join(q.manifestsDir, entry), 'utf8'));
    } catch {
      continue;
    }
    const pod = doc as {
      metadata?: { name?: unknown; namespace?: unknown; annotations?: Record<string, unknown> };
      spec?: { containers?: Array<{ name?: unknown }>; initContainers?: Array<{ name?: unknown }> };
    } | null;
    if (pod?.metadata?.annotations?.[DEPLOYMENT_ANNOTATION] !== key) continue;
    if (typeof pod.metadata.name !== 'string') continue;
    const names = (list: Array<{ name?: unknown }> | undefined): string[] =>
      (list ?? []).map((c) => c.name).filter((n): n is string => typeof n === 'string');
    pods.push({
      namespace: typeof pod.metadata.namespace === 'string' ? pod.metadata.namespace : 'default',
      name: pod.metadata.name,
      containers: names(pod.spec?.containers),
      initContainers: names(pod.spec?.initContainers),
    });
  }
  return pods;
}

/**
 * The log sources of a deployment's Pods on one node: the static Pods the agent wrote for it
 * (a surge runs two), matched to kubelet's log directories by namespace and Pod name. NOT_FOUND
 * when the node runs no Pod of it, or has no such container (naming the ones it has).
 */
export async function findPodLogSources(q: PodLogQuery): Promise<PodLogSource[]> {
  const pods = await deploymentPods(q);
  if (pods.length === 0)
    throw new PodminError(
      'NOT_FOUND',
      `reading logs of ${q.nodegroup}/${q.name}: node ${q.nodeName} runs no Pod of it`,
      { hint: 'See what each node runs with `podmin status`.' },
    );
  let dirs: string[];
  try {
    dirs = await fs.readdir(q.podLogDir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    dirs = [];
  }
  const node = q.nodeName.toLowerCase();
  const sources: PodLogSource[] = [];
  for (const pod of pods) {
    const containers =
      q.container === undefined
        ? pod.containers
        : [q.container].filter((c) => pod.containers.includes(c) || pod.initContainers.includes(c));
    if (q.container !== undefined && containers.length === 0)
      throw new PodminError(
        'NOT_FOUND',
        `reading logs of ${q.nodegroup}/${q.name}: Pod ${pod.name} has no container ${JSON.stringify(q.container)}`,
        {
          hint: `Its containers: ${[...pod.containers, ...pod.initContainers.map((c) => `${c} (init)`)].join(', ')}.`,
        },
      );
    // kubelet names a static Pod `<name>-<node name>`; its log directory adds the Pod's UID.
    // An earlier Pod of the same name (another revision, or a kubelet since restarted) may have
    // left its directory behind: the current one is the one written last.
    const prefix = `${pod.namespace}_${pod.name}-${node}_`;
    const candidates = dirs.filter(
      (d) => d.startsWith(prefix) && !d.slice(prefix.length).includes('_'),
    );
    const dir = await newest(candidates.map((d) => path.join(q.podLogDir, d)));
    if (dir === undefined) continue;
    for (const container of containers)
      sources.push({
        node: q.nodeName,
        namespace: pod.namespace,
        pod: pod.name,
        container,
        dir: path.join(dir, container),
      });
  }
  return sources;
}

/** The directory whose newest file (one level down: the containers' logs) was written last. */
async function newest(dirs: readonly string[]): Promise<string | undefined> {
  let best: { dir: string; mtimeMs: number } | undefined;
  for (const dir of dirs) {
    let mtimeMs = 0;
    for (const container of await fs.readdir(dir).catch(() => [] as string[])) {
      for (const file of await fs.readdir(path.join(dir, container)).catch(() => [] as string[])) {
        const st = await fs.stat(path.join(dir, container, file)).catch(() => undefined);
        if (st !== undefined && st.mtimeMs > mtimeMs) mtimeMs = st.mtimeMs;
      }
    }
    if (best === undefined || mtimeMs > best.mtimeMs) best = { dir, mtimeMs };
  }
  return best?.dir;
}

/**
 * The files of a container's current instance, oldest first: kubelet writes `<restarts>.log`
 * and rotates it to `<restarts>.log.<time>` (compressed rotations are skipped).
 */
export async function currentLogFiles(dir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  let restarts = -1;
  for (const n of names) {
    const m = /^(\d+)\.log$/.exec(n);
    if (m) restarts = Math.max(restarts, Number(m[1]));
  }
  if (restarts < 0) return [];
  const live = `${restarts}.log`;
  const rotated = names.filter((n) => n.startsWith(`${live}.`) && !n.endsWith('.gz')).sort();
  return [...rotated, live].map((n) => path.join(dir, n));
}

/** What to read: lines from `sinceMs` on, then the last `tail` of them per source. */
export interface ReadOptions {
  sinceMs?: number;
  tail?: number;
}

/** A line and the source it came from. */
export interface SourcedLine extends LogLine {
  source: PodLogSource;
}

/** The whole lines of one source's text, filtered by `sinceMs` and `tail`. */
export function filterLines(
  source: PodLogSource,
  text: string,
  options: ReadOptions,
): SourcedLine[] {
  let lines = criLines(text);
  const since = options.sinceMs;
  if (since !== undefined) lines = lines.filter((l) => l.timeMs >= since);
  if (options.tail !== undefined) lines = options.tail === 0 ? [] : lines.slice(-options.tail);
  return lines.map((l) => ({ ...l, source }));
}

/** Lines of several sources merged by time; lines of one source keep their order on ties. */
export function mergeByTime(perSource: readonly SourcedLine[][]): SourcedLine[] {
  return perSource.flat().sort((a, b) => a.timeMs - b.timeMs);
}

/** Reads files in order as one text, a missing one (rotated away meanwhile) skipped. */
export async function readLogText(files: readonly string[]): Promise<string> {
  let text = '';
  for (const file of files) {
    try {
      text += await fs.readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    if (text !== '' && !text.endsWith('\n')) text += '\n';
  }
  return text;
}

/** The whole lines of each source (its current instance), filtered, merged by time. */
export async function readPodLogs(
  sources: readonly PodLogSource[],
  options: ReadOptions = {},
): Promise<SourcedLine[]> {
  const perSource: SourcedLine[][] = [];
  for (const source of sources)
    perSource.push(
      filterLines(source, await readLogText(await currentLogFiles(source.dir)), options),
    );
  return mergeByTime(perSource);
}

/** `[pod/container] ` when lines from several sources interleave (`[node/pod/container] ` across nodes). */
export function linePrefix(source: PodLogSource, sources: readonly PodLogSource[]): string {
  if (sources.length <= 1) return '';
  const nodes = new Set(sources.map((s) => s.node));
  return nodes.size > 1
    ? `[${source.node}/${source.pod}/${source.container}] `
    : `[${source.pod}/${source.container}] `;
}
