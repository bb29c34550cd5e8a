import type { CommandModule } from 'yargs';
import type { ContextRow } from '@podmin/cli-feature-context';
import type { CliContext } from '../../cli-context';
import { runWithOutput, withOutputOption, type OutputArgs } from '../output-option';

/** `podmin use [cluster]`: select a context, or list them. */
export function useCommand(
  ctx: CliContext,
): CommandModule<object, OutputArgs & { cluster?: string }> {
  return {
    command: 'use [cluster]',
    describe: 'Select a saved cluster context, or list contexts when no cluster is given',
    builder: (y) =>
      withOutputOption(y.positional('cluster', { type: 'string', describe: 'Cluster to select' }), [
        ['$0 use', 'List contexts; the current one is marked with *'],
        ['$0 use prod', 'Make prod the current context'],
        ['$0 use -o json', 'The contexts as JSON, each with "current": true|false'],
        ['$0 use -o name', 'One context/<cluster> per line'],
      ]),
    handler: (args) =>
      runWithOutput<ContextRow[] | ContextRow | null>(ctx, args.output, async () => {
        const { useContext, listContexts, contextTable } =
          await import('@podmin/cli-feature-context');
        if (args.cluster === undefined) {
          const rows = await listContexts(ctx);
          return {
            data: rows,
            table: () => contextTable(rows),
            names: () => rows.map((c) => `context/${c.cluster}`),
          };
        }
        const cluster = args.cluster;
        await useContext(cluster, ctx);
        const selected = (await listContexts(ctx)).find((c) => c.cluster === cluster);
        return {
          data: selected ?? null,
          // "Switched to cluster …" on stderr says it for people.
          table: () => '',
          names: () => [`context/${cluster}`],
        };
      }),
  };
}
