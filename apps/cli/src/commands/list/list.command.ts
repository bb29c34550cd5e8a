import type { CommandModule } from 'yargs';
import { renderTable } from '@podmin/cli-util-io';
import type { CliContext } from '../../cli-context';
import { runWithOutput, withOutputOption, type OutputArgs } from '../output-option';

/** `podmin list`: the committed desired-state inventory. */
export function listCommand(ctx: CliContext): CommandModule<object, OutputArgs> {
  return {
    command: 'list',
    describe: 'List committed deployments (desired state, not runtime status)',
    builder: (y) =>
      withOutputOption(y, [
        ['$0 list', 'NAME, NAMESPACE, NODEGROUP, SERVICE, ORIGIN'],
        ['$0 list -o json', "The same as JSON, with each Service's VIP"],
        ['$0 list -o name', 'One deployment/<nodegroup>/<name> per line'],
      ]),
    handler: (args) =>
      runWithOutput(ctx, args.output, async () => {
        const { context, store } = await ctx.currentBucket();
        const { listDeployments, payloadCacheIn, summaryCacheIn } =
          await import('@podmin/cli-feature-deploy');
        const rows = await listDeployments(store, (m) => ctx.reporter.warn(m), context.cluster, {
          cache: payloadCacheIn(ctx.dirs.cache),
          summaries: summaryCacheIn(ctx.dirs.cache),
        });
        return {
          data: rows,
          table: () =>
            renderTable(
              ['NAME', 'NAMESPACE', 'NODEGROUP', 'SERVICE', 'ORIGIN'],
              rows.map((r) => [
                r.name,
                r.namespace,
                r.nodegroup,
                r.service ?? '-',
                r.origin ?? '-',
              ]),
            ),
          names: () => rows.map((r) => `deployment/${r.nodegroup}/${r.name}`),
        };
      }),
  };
}
