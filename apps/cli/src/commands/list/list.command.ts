import type { CommandModule } from 'yargs';
import { renderTable } from '@podmin/cli-util-io';
import type { CliContext } from '../../cli-context';

/** `podmin list`: the committed desired-state inventory. */
export function listCommand(ctx: CliContext): CommandModule<object, { output: string }> {
  return {
    command: 'list',
    describe: 'List committed deployments (desired state, not runtime status)',
    builder: (y) =>
      y
        .option('output', {
          alias: 'o',
          type: 'string',
          choices: ['table', 'json'],
          default: 'table',
          describe: 'Output format',
        })
        .example('$0 list', 'NAME, NAMESPACE, NODEGROUP, SERVICE, ORIGIN')
        .example('$0 list -o json', "The same as JSON, with each Service's VIP"),
    handler: async (args) => {
      const { context, store } = await ctx.currentBucket();
      const { listDeployments, payloadCacheIn } = await import('@podmin/cli-feature-deploy');
      const rows = await listDeployments(store, (m) => ctx.reporter.warn(m), context.cluster, {
        cache: payloadCacheIn(ctx.dirs.cache),
      });
      if (args.output === 'json') {
        ctx.reporter.result(JSON.stringify(rows, null, 2));
        return;
      }
      ctx.reporter.result(
        renderTable(
          ['NAME', 'NAMESPACE', 'NODEGROUP', 'SERVICE', 'ORIGIN'],
          rows.map((r) => [r.name, r.namespace, r.nodegroup, r.service ?? '-', r.origin ?? '-']),
        ),
      );
    },
  };
}
