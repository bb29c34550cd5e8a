import type { CommandModule } from 'yargs';
import { renderTable } from '@podmin/cli-util-io';
import type { CliContext } from '../../cli-context';
import { withDeploymentTarget, type DeploymentTargetArgs } from '../deployment-target';
import { parseLimit } from '../flag-values';
import { runWithOutput, withOutputOption, type OutputArgs } from '../output-option';

type HistoryArgs = OutputArgs & DeploymentTargetArgs & { limit: string };

/** `podmin history <name> -g NG`: the revisions a deployment has had. */
export function historyCommand(ctx: CliContext): CommandModule<object, HistoryArgs> {
  return {
    command: 'history <name>',
    describe: 'List the revisions of a deployment, newest first, and which one is current',
    builder: (y) =>
      withOutputOption(
        withDeploymentTarget(y)
          .option('limit', {
            type: 'string',
            default: '10',
            describe: 'Show at most this many revisions, newest first; 0 shows all',
          })
          .check((a) => {
            parseLimit(a.limit);
            return true;
          }),
        [
          [
            '$0 history web -g default',
            'REVISION, TIME, ACTION, IMAGES and CURRENT (*) of the 10 newest; a revision is the first 12 hex of its Pod payload SHA-512',
          ],
          ['$0 history web -g default --limit 0', 'Every revision'],
          ['$0 history web -g default -o json', 'The same as JSON, with the payload keys'],
          ['$0 history web -g default -o name --limit 1', 'The newest revision as revision/<hex>'],
        ],
      ).epilogue(
        'Every deploy, delete and rollback that replaces an entry records it in the bucket under history/. A revision without a time was committed before any recorded change (for example the first deploy). When --limit leaves older revisions out, stderr says how many. Roll back with `podmin rollback <name> -g NG [--to REVISION]`.',
      ),
    handler: (args) =>
      runWithOutput(ctx, args.output, async () => {
        const limit = parseLimit(args.limit);
        const { store } = await ctx.currentBucket();
        const { historyWithImages, payloadCacheIn } = await import('@podmin/cli-feature-deploy');
        const history = await historyWithImages(
          store,
          args.nodegroup,
          args.name,
          (m) => ctx.reporter.warn(m),
          { cache: payloadCacheIn(ctx.dirs.cache), limit },
        );
        if (history.omitted > 0)
          ctx.reporter.info(
            `${history.omitted} older revision${history.omitted === 1 ? '' : 's'} not shown (--limit ${limit}; --limit 0 shows all)`,
          );
        const rows = history.rows.map((r) => ({
          revision: r.revision,
          time: r.time,
          action: r.action,
          current: r.current,
          images: r.images,
          pod: r.entry?.pod ?? null,
          service: r.entry?.service ?? null,
        }));
        return {
          data: rows,
          names: () => rows.flatMap((r) => (r.revision === null ? [] : [`revision/${r.revision}`])),
          table: () =>
            renderTable(
              ['REVISION', 'TIME', 'ACTION', 'IMAGES', 'CURRENT'],
              rows.map((r) => [
                r.revision ?? '-',
                r.time ?? '-',
                r.action ?? '-',
                r.pod === null ? '(deleted)' : (r.images?.join(',') ?? '?'),
                r.current ? '*' : '',
              ]),
            ),
        };
      }),
  };
}
