import { escapeControlCharacters } from '@podmin/util-errors';
import type { DeploymentStatus, NodeState } from './status';

// How `podmin status` puts a deployment's status into words: its summary line, its rollout
// line and short ages.

/** One summary line, e.g. `web: 3/3 ready` or `web: 1/2 ready (1 pending, 1 stale)`. */
export function summaryLine(status: DeploymentStatus): string {
  const counts = new Map<NodeState, number>();
  for (const n of status.nodes) counts.set(n.state, (counts.get(n.state) ?? 0) + 1);
  const extra = (['not-ready', 'applied', 'pending', 'stale', 'error'] as const)
    .filter((s) => (counts.get(s) ?? 0) > 0)
    .map((s) => `${counts.get(s) ?? 0} ${STATE_WORDS[s]}`);
  const tail = status.live === 0 ? ' (no live node)' : '';
  return `${status.name}: ${status.ready}/${status.live} ready${extra.length > 0 ? ` (${extra.join(', ')})` : ''}${tail}`;
}

/**
 * The rollout line of a deployment, e.g. `web rollout to 3f2a9c01ab12: 2/5 updated, 2
 * available, paused; halted: i-abc: Pod not available within 5m0s`. The halt reason is the
 * node's words, with control characters escaped.
 */
export function rolloutLine(status: Pick<DeploymentStatus, 'name' | 'rollout'>): string {
  const r = status.rollout;
  const flags = r.paused ? ', paused' : '';
  const halt =
    r.halted === null
      ? ''
      : `; halted: ${escapeControlCharacters(r.halted.node)}: ${escapeControlCharacters(r.halted.reason)}`;
  return `${status.name} rollout to ${r.target}: ${r.updated}/${r.total} updated, ${r.available} available${flags}${halt}`;
}

const STATE_WORDS: Record<NodeState, string> = {
  ready: 'ready',
  'not-ready': 'not ready',
  applied: 'applied, Ready unknown',
  pending: 'pending',
  stale: 'stale',
  error: 'unreadable',
};

/** A short age: `42s`, `7m`, `3h`, `2d`. */
export function formatAge(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172_800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}
