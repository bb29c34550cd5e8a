import { PodminError } from '@podmin/util-errors';
import { parseDeploymentKey } from '@podmin/util-desired-state';
import { escapeControlCharacters } from '@podmin/util-errors';
import type { RolloutHalt } from '@podmin/util-rollout';
import { readRolloutStateForDisplay } from './rollout-state';
import {
  nodeStatus,
  readReceipts,
  rolloutProgress,
  type NodeStatus,
  type StatusStore,
} from './status';

/** What {@link waitForRollout} waits for: a revision Ready on every live node, or the deployment gone. */
export type WaitTarget = { revision: string } | { removed: true };

/** Options of {@link waitForRollout}. */
export interface WaitOptions {
  /** Index key `<nodegroup>/<name>`. */
  key: string;
  target: WaitTarget;
  /**
   * The Pod payload key of a `revision` target: each poll then also reads the rollout state,
   * shows its waves, and fails at once when the rollout to this payload is halted.
   */
  pod?: string;
  timeoutMs: number;
  /** Between receipt reads (default 2 s). */
  pollMs?: number;
  /** A line of progress, each time the picture changes. */
  progress?: (line: string) => void;
  /** Told (once per message) when the rollout state is malformed and so ignored. */
  warn?: (message: string) => void;
  now?: () => Date;
  sleep?: (ms: number) => Promise<void>;
}

/** How a wait ended. */
export interface WaitOutcome {
  ok: boolean;
  /** The live nodes' rows at the end (stale and unreadable ones included, marked so). */
  nodes: NodeStatus[];
  /** One line: what is ready, or which nodes are not and why. */
  message: string;
  /** Set when the wait ended because the leader halted the rollout to the target. */
  halted?: RolloutHalt;
}

/** Default poll of `deploy --wait`: a receipt read per node every 2 s. */
export const DEFAULT_WAIT_POLL_MS = 2_000;

/**
 * Polls the NodeGroup's receipts until every live node (receipt readable, not stale) reports
 * `target`: the revision applied and Ready, or the deployment gone from its receipt. Ends early
 * without success when every live node applied the revision but none can tell Ready (no kubelet
 * Pods API: it would never come), or, with `pod`, when the rollout state says the rollout to it
 * is halted (naming the node and its reason). Fails at the deadline naming each node that is
 * not there and why; with no live node at all it says so. While the leader rolls `pod` out in
 * waves, a progress line counts them (`web: 2/5 updated, 2 available`).
 */
export async function waitForRollout(
  store: StatusStore,
  options: WaitOptions,
): Promise<WaitOutcome> {
  const now = options.now ?? (() => new Date());
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const pollMs = options.pollMs ?? DEFAULT_WAIT_POLL_MS;
  const { nodegroup, name } = parseDeploymentKey(options.key);
  const revision = 'revision' in options.target ? options.target.revision : null;
  const goal = revision === null ? `${name} removed` : `${name} ${revision}`;
  const deadline = now().getTime() + options.timeoutMs;
  let lastLine = '';
  let lastWave = '';
  const warned = new Set<string>();
  const warnOnce = (message: string): void => {
    if (!warned.has(message)) options.warn?.(message);
    warned.add(message);
  };
  for (;;) {
    const at = now();
    const reads = await readReceipts(store, nodegroup);
    const nodes = reads.map((r) => nodeStatus(r, options.key, revision, at));
    const live = nodes.filter((n) => n.state !== 'stale' && n.state !== 'error');
    const done = live.filter((n) => n.state === 'ready');
    const rollout =
      revision === null || options.pod === undefined
        ? undefined
        : (await readRolloutStateForDisplay(store, warnOnce))?.deployments[options.key];
    if (revision !== null && rollout !== undefined && rollout.target === options.pod) {
      const wave = rolloutProgress(revision, nodes, rollout, options.pod);
      const waveLine = `${name}: ${wave.updated}/${wave.total} updated, ${wave.available} available${wave.paused ? ' (paused)' : ''}`;
      if (waveLine !== lastWave) options.progress?.(waveLine);
      lastWave = waveLine;
    }
    const line = progressLine(goal, live, done.length, nodes.length - live.length);
    if (line !== lastLine) options.progress?.(line);
    lastLine = line;
    if (live.length > 0 && done.length === live.length) {
      return { ok: true, nodes, message: `${goal}: ${done.length}/${live.length} nodes ready` };
    }
    const halted = rollout?.target === options.pod ? rollout?.halted : null;
    if (halted) {
      return {
        ok: false,
        nodes,
        halted,
        message: `rollout halted: node ${escapeControlCharacters(halted.node)}: ${escapeControlCharacters(halted.reason)}`,
      };
    }
    const blind = live.filter((n) => n.state === 'applied');
    if (live.length > 0 && blind.length + done.length === live.length) {
      return {
        ok: false,
        nodes,
        message: `${goal}: applied on ${blind.map((n) => n.node).join(', ')}, but Ready is unknown there (kubelet Pods API ${blind[0]?.kubelet ?? 'absent'}; no node stack?)`,
      };
    }
    if (at.getTime() >= deadline) {
      const message =
        live.length === 0
          ? `${goal}: no live node in NodeGroup ${nodegroup} (${nodes.length === 0 ? 'no receipts at all' : `${nodes.length} stale or unreadable`})`
          : `${goal}: not ready after ${Math.round(options.timeoutMs / 1000)} s on ${live
              .filter((n) => n.state !== 'ready')
              .map(describe)
              .join('; ')}`;
      return { ok: false, nodes, message };
    }
    await sleep(Math.min(pollMs, Math.max(0, deadline - at.getTime())));
  }
}

function describe(n: NodeStatus): string {
  const why =
    n.reason ??
    (n.state === 'pending'
      ? n.applied === null
        ? 'not applied yet'
        : `still on ${n.applied}`
      : n.state === 'applied'
        ? 'Ready unknown'
        : 'not Ready');
  return `${n.node} (${why})`;
}

function progressLine(goal: string, live: NodeStatus[], ready: number, gone: number): string {
  const waiting = live.filter((n) => n.state !== 'ready').map(describe);
  return `${goal}: ${ready}/${live.length} nodes ready${gone > 0 ? `, ${gone} stale or unreadable` : ''}${waiting.length > 0 ? `; waiting for ${waiting.join('; ')}` : ''}`;
}

/** Raised when `deploy --wait` ends without every live node Ready. */
export class RolloutFailedError extends PodminError {
  constructor(message: string, hint: string) {
    super('SERVICE_UNAVAILABLE', message, { hint, fault: 'user' });
    this.name = 'RolloutFailedError';
  }
}
