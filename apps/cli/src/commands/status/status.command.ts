import type { CommandModule } from 'yargs';
import { renderTable } from '@podmin/cli-util-io';
import { escapeControlCharacters } from '@podmin/util-errors';
import type { CliContext } from '../../cli-context';

type StatusArgs = { name?: string; nodegroup?: string; output: string };

/** `podmin status [name] [-g NG]`: what each node runs, from the receipts in the bucket. */
export function statusCommand(ctx: CliContext): CommandModule<object, StatusArgs> {
  return {
    command: 'status [name]',
    describe:
      'Show what each node applied and whether kubelet reports it Ready (from node receipts)',
    builder: (y) =>
      y
        .positional('name', { type: 'string', describe: 'Only this deployment' })
        .option('nodegroup', { alias: 'g', type: 'string', describe: 'Only this NodeGroup' })
        .option('output', {
          alias: 'o',
          type: 'string',
          choices: ['table', 'json'],
          default: 'table',
          describe: 'Output format',
        })
        .example(
          '$0 status',
          'Every deployment: DESIRED and APPLIED revision, READY, RESTARTS, AGE, REASON per node',
        )
        .example(
          '$0 status web -g default -o json',
          'One deployment as JSON, with its rollout: {target, updated, available, total, paused, halted}',
        )
        .epilogue(
          'Each node writes its own receipt status/<nodegroup>/<node-id>.json when what it applied changes and every 5 minutes. ' +
            'A revision is the first 12 hex of the Pod payload\'s SHA-512. READY is "unknown" without a kubelet Pods API (no node stack). ' +
            'A node whose receipt is older than three heartbeats is shown as stale and not counted; a malformed receipt is shown as an error for its node. ' +
            'Below the table, per deployment, its rollout: the target revision, live nodes updated to it and of those available (Ready), whether it is paused, and the node and reason it halted at (from dns/rollouts.json; a malformed one is warned about and left out). ' +
            'Reads only the bucket and changes nothing.',
        ),
    handler: async (args) => {
      const { store } = await ctx.currentBucket();
      const { readStatus, summaryLine, rolloutLine, formatAge } =
        await import('@podmin/cli-feature-deploy');
      const statuses = await readStatus(store, {
        ...(args.name !== undefined ? { name: args.name } : {}),
        ...(args.nodegroup !== undefined ? { nodegroup: args.nodegroup } : {}),
        warn: (m) => ctx.reporter.warn(m),
      });
      if (args.output === 'json') {
        ctx.reporter.result(
          JSON.stringify(
            statuses.map((s) => ({ ...s, summary: summaryLine(s) })),
            null,
            2,
          ),
        );
        return;
      }
      const rows = statuses.flatMap((s) =>
        s.nodes.length === 0
          ? [[s.name, s.nodegroup, '-', s.desired, '-', '-', '-', '-', 'no node receipts']]
          : s.nodes.map((n) => [
              s.name,
              s.nodegroup,
              n.node,
              s.desired,
              n.applied ?? '-',
              n.state === 'stale'
                ? 'stale'
                : n.state === 'error'
                  ? 'error'
                  : n.ready === null
                    ? 'unknown'
                    : String(n.ready),
              n.restarts === null ? '-' : String(n.restarts),
              formatAge(n.ageMs),
              // Reasons are the node's words (kubelet messages): never let them drive the terminal.
              n.reason !== null
                ? escapeControlCharacters(n.reason)
                : n.state === 'applied' && n.kubelet === 'absent'
                  ? 'no kubelet Pods API'
                  : '-',
            ]),
      );
      const table = renderTable(
        ['NAME', 'NODEGROUP', 'NODE', 'DESIRED', 'APPLIED', 'READY', 'RESTARTS', 'AGE', 'REASON'],
        rows,
      );
      ctx.reporter.result(
        statuses.length === 0
          ? 'No deployments committed.'
          : `${table}\n${statuses.map((s) => `${summaryLine(s)}\n${rolloutLine(s)}`).join('\n')}`,
      );
    },
  };
}
