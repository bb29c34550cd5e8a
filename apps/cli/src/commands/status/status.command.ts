import type { CommandModule } from 'yargs';
import { renderTable } from '@podmin/cli-util-io';
import { escapeControlCharacters } from '@podmin/util-errors';
import type { CliContext } from '../../cli-context';
import { parseRetention } from '../flag-values';
import { runWithOutput, withOutputOption, type OutputArgs } from '../output-option';

type StatusArgs = OutputArgs & {
  name?: string;
  nodegroup?: string;
  retention: string;
  prune?: boolean;
};

/** `podmin status [name] [-g NG]`: what each node runs, from the receipts in the bucket. */
export function statusCommand(ctx: CliContext): CommandModule<object, StatusArgs> {
  return {
    command: 'status [name]',
    describe:
      'Show what each node applied and whether kubelet reports it Ready (from node receipts)',
    builder: (y) =>
      withOutputOption(
        y
          .positional('name', { type: 'string', describe: 'Only this deployment' })
          .option('nodegroup', { alias: 'g', type: 'string', describe: 'Only this NodeGroup' })
          .option('retention', {
            type: 'string',
            default: '24h',
            describe:
              'Hide nodes whose last receipt is older than this (24h, 90m; at least 15m, three heartbeats); stderr says how many',
          })
          .option('prune', {
            type: 'boolean',
            describe:
              'Instead of the status, delete the receipts older than --retention (never a live node’s) and print what was deleted',
          })
          .check((a) => {
            parseRetention(a.retention, 0);
            return true;
          }),
        [
          [
            '$0 status',
            'Every deployment: DESIRED and APPLIED revision, READY, RESTARTS, AGE, REASON per node',
          ],
          [
            '$0 status web -g default -o json',
            'One deployment as JSON, with its rollout: {target, updated, available, total, paused, halted}',
          ],
          ['$0 status -o yaml', 'The same as YAML'],
          ['$0 status -o name', 'One deployment/<nodegroup>/<name> per line'],
          ['$0 status --retention 90m', 'Hide nodes silent for more than 90 minutes'],
          [
            '$0 status --prune',
            'Delete receipts older than 24h; prints KEY, NODEGROUP, NODE, AGE of each',
          ],
        ],
      ).epilogue(
        'Each node writes its own receipt status/<nodegroup>/<node-id>.json when what it applied changes and every 5 minutes. ' +
          'A revision is the first 12 hex of the Pod payload\'s SHA-512. READY is "unknown" without a kubelet Pods API (no node stack). ' +
          'A node whose receipt is older than three heartbeats is shown as stale and not counted; one older than --retention (default 24h) is left out, and a line on stderr (and each deployment\'s "dropped" in json/yaml) says how many; `podmin status --prune` deletes those receipts (with -g only that NodeGroup\'s; a receipt a node rewrote meanwhile is kept). A malformed receipt is shown as an error for its node. ' +
          'Below the table, per deployment, its rollout: the target revision, live nodes updated to it and of those available (Ready), whether it is paused, and the node and reason it halted at (from dns/rollouts.json; a malformed one is warned about and left out). ' +
          'Without --prune it reads only the bucket and changes nothing.',
      ),
    handler: async (args) => {
      const { MIN_RECEIPT_RETENTION_MS } = await import('@podmin/cli-feature-deploy');
      const retentionMs = parseRetention(args.retention, MIN_RECEIPT_RETENTION_MS);
      if (args.prune === true) await prune(ctx, args, retentionMs);
      else await status(ctx, args, retentionMs);
    },
  };
}

async function status(ctx: CliContext, args: StatusArgs, retentionMs: number): Promise<void> {
  await runWithOutput(ctx, args.output, async () => {
    const { store } = await ctx.currentBucket();
    const { readStatusReport, summaryLine, rolloutLine, formatAge } =
      await import('@podmin/cli-feature-deploy');
    const report = await readStatusReport(store, {
      ...(args.name !== undefined ? { name: args.name } : {}),
      ...(args.nodegroup !== undefined ? { nodegroup: args.nodegroup } : {}),
      warn: (m) => ctx.reporter.warn(m),
      retentionMs,
    });
    if (report.dropped.length > 0) {
      const n = report.dropped.length;
      ctx.reporter.info(
        `${n} node${n === 1 ? '' : 's'} hidden: no receipt for more than ${args.retention} (${report.dropped.map((d) => `${d.nodegroup}/${d.node}`).join(', ')}); \`podmin status --prune\` deletes ${n === 1 ? 'its receipt' : 'their receipts'}`,
      );
    }
    const statuses = report.deployments;
    return {
      data: statuses.map((s) => ({ ...s, summary: summaryLine(s) })),
      names: () => statuses.map((s) => `deployment/${s.nodegroup}/${s.name}`),
      table: () => {
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
        return statuses.length === 0
          ? 'No deployments committed.\n'
          : `${table}\n${statuses.map((s) => `${summaryLine(s)}\n${rolloutLine(s)}`).join('\n')}\n`;
      },
    };
  });
}

async function prune(ctx: CliContext, args: StatusArgs, retentionMs: number): Promise<void> {
  await runWithOutput(ctx, args.output, async () => {
    const { store } = await ctx.currentBucket();
    const { pruneReceipts, formatAge } = await import('@podmin/cli-feature-deploy');
    const deleted = await pruneReceipts(store, {
      retentionMs,
      ...(args.nodegroup !== undefined ? { nodegroup: args.nodegroup } : {}),
    });
    ctx.reporter.info(
      `Deleted ${deleted.length} receipt${deleted.length === 1 ? '' : 's'} older than ${args.retention}.`,
    );
    return {
      data: deleted,
      names: () => deleted.map((d) => `receipt/${d.nodegroup}/${d.node}`),
      table: () =>
        deleted.length === 0
          ? ''
          : renderTable(
              ['KEY', 'NODEGROUP', 'NODE', 'AGE'],
              deleted.map((d) => [d.key, d.nodegroup, d.node, formatAge(d.ageMs)]),
            ),
    };
  });
}
