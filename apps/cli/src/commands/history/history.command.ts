import type { CommandModule } from 'yargs';
import { renderTable } from '@podmin/cli-util-io';
import type { CliContext } from '../../cli-context';

/** `podmin history <name> -g NG`: the revisions a deployment has had. */
export function historyCommand(
  ctx: CliContext,
): CommandModule<object, { name: string; nodegroup: string; output: string }> {
  return {
    command: 'history <name>',
    describe: 'List the revisions of a deployment, newest first, and which one is current',
    builder: (y) =>
      y
        .positional('name', { type: 'string', demandOption: true, describe: 'Deployment name' })
        .option('nodegroup', {
          alias: 'g',
          type: 'string',
          demandOption: true,
          describe: 'NodeGroup of the deployment',
        })
        .option('output', {
          alias: 'o',
          type: 'string',
          choices: ['table', 'json'],
          default: 'table',
          describe: 'Output format',
        })
        .example(
          '$0 history web -g default',
          'REVISION, TIME, ACTION, IMAGES and CURRENT (*); a revision is the first 12 hex of its Pod payload SHA-512',
        )
        .example('$0 history web -g default -o json', 'The same as JSON, with the payload keys')
        .epilogue(
          'Every deploy, delete and rollback that replaces an entry records it in the bucket under history/. A revision without a time was committed before any recorded change (for example the first deploy). Roll back with `podmin rollback <name> -g NG [--to REVISION]`.',
        ),
    handler: async (args) => {
      const { store } = await ctx.currentBucket();
      const { historyWithImages, payloadCacheIn } = await import('@podmin/cli-feature-deploy');
      const history = await historyWithImages(
        store,
        args.nodegroup,
        args.name,
        (m) => ctx.reporter.warn(m),
        { cache: payloadCacheIn(ctx.dirs.cache) },
      );
      if (args.output === 'json') {
        const rows = history.rows.map((r) => ({
          revision: r.revision,
          time: r.time,
          action: r.action,
          current: r.current,
          images: r.images,
          pod: r.entry?.pod ?? null,
          service: r.entry?.service ?? null,
        }));
        ctx.reporter.result(JSON.stringify(rows, null, 2));
        return;
      }
      ctx.reporter.result(
        renderTable(
          ['REVISION', 'TIME', 'ACTION', 'IMAGES', 'CURRENT'],
          history.rows.map((r) => [
            r.revision ?? '-',
            r.time ?? '-',
            r.action ?? '-',
            r.entry === null ? '(deleted)' : (r.images?.join(',') ?? '?'),
            r.current ? '*' : '',
          ]),
        ),
      );
    },
  };
}
