import type { CommandModule } from 'yargs';
import type { CliContext } from '../../cli-context';
import { loadImageFeature } from '../image-feature';
import { runWithOutput, withOutputOption, type OutputArgs } from '../output-option';

interface PushArgs extends OutputArgs {
  source: string;
  destination?: string;
  pull?: boolean;
  'plain-http'?: boolean;
}

/** `podmin push SOURCE [DESTINATION]`: publish an image to the cluster bucket under apps/. */
export function pushCommand(ctx: CliContext): CommandModule<object, PushArgs> {
  return {
    command: 'push <source> [destination]',
    describe:
      'Publish an image from the local store (pulled when absent) to the cluster bucket; prints the cluster reference',
    builder: (y) =>
      withOutputOption(
        y
          .positional('source', {
            type: 'string',
            demandOption: true,
            describe: 'A built image (hello:v1) or a registry reference (nginx:1.27)',
          })
          .positional('destination', {
            type: 'string',
            describe:
              'Cluster name, e.g. hello:v2, resolved exactly as --image resolves it: without a tag it is :latest (default: the source beneath apps/)',
          })
          .option('pull', { type: 'boolean', describe: 'Pull the source again even when stored' })
          .option('plain-http', {
            type: 'boolean',
            describe: 'Pull over HTTP instead of HTTPS (loopback registries always use HTTP)',
          })
          .example('$0 push hello:v1', 'A local build → registry.podmin.internal/apps/hello:v1')
          .example(
            '$0 push ghcr.io/acme/web:v1',
            'Pull and publish as registry.podmin.internal/apps/acme/web:v1',
          )
          .example('$0 push nginx:1.27 web:prod', 'Publish under another name')
          .example(
            '$0 push hello:v1 web',
            'Publish as registry.podmin.internal/apps/web:latest, what --image web deploys',
          ),
        [
          ['$0 push hello:v1 -o json', 'Print {reference} and no progress'],
          ['$0 push hello:v1 -o name', 'Print image/registry.podmin.internal/apps/hello:v1'],
        ],
      ),
    handler: (args) =>
      runWithOutput(ctx, args.output, async () => {
        const { store: bucket } = await ctx.currentBucket();
        const { lib, deps, formatReference } = await loadImageFeature(ctx, {
          plainHttp: args['plain-http'] === true,
        });
        const pushed = await lib.pushImage(deps, bucket, {
          source: args.source,
          ...(args.destination !== undefined ? { destination: args.destination } : {}),
          ...(args.pull === true ? { pull: true } : {}),
        });
        const reference = formatReference(pushed);
        return {
          data: { reference },
          table: () => reference,
          names: () => [`image/${reference}`],
        };
      }),
  };
}
