import type { CommandModule } from 'yargs';
import type { CliContext } from '../../cli-context';
import { loadImageFeature } from '../image-feature';
import { runWithOutput, withOutputOption, type OutputArgs } from '../output-option';

interface PullArgs extends OutputArgs {
  source: string;
  'plain-http'?: boolean;
}

/** `podmin pull SOURCE`: import a complete remote image into the local store. */
export function pullCommand(ctx: CliContext): CommandModule<object, PullArgs> {
  return {
    command: 'pull <source>',
    describe: 'Import a complete image (every platform) from a registry into the local store',
    builder: (y) =>
      withOutputOption(
        y
          .positional('source', {
            type: 'string',
            demandOption: true,
            describe: 'Image reference, e.g. nginx:1.27 or ghcr.io/acme/web:v1',
          })
          .option('plain-http', {
            type: 'boolean',
            describe: 'Use HTTP instead of HTTPS (loopback registries always use HTTP)',
          })
          .example('$0 pull nginx:1.27', 'Docker Hub image, all platforms')
          .example('$0 pull ghcr.io/acme/web@sha256:…', 'By digest'),
        [
          ['$0 pull nginx:1.27 -o json', 'Print {reference, digest} and no progress'],
          ['$0 pull nginx:1.27 -o name', 'Print image/docker.io/library/nginx:1.27@sha256:…'],
        ],
      ),
    handler: (args) =>
      runWithOutput(ctx, args.output, async () => {
        const { lib, deps, formatReference } = await loadImageFeature(ctx, {
          plainHttp: args['plain-http'] === true,
        });
        const pulled = await lib.pullImage(deps, args.source);
        const reference = formatReference({ ...pulled.reference, digest: undefined });
        const digest = pulled.descriptor.digest;
        return {
          data: { reference, digest },
          table: () => `${reference}@${digest}`,
          names: () => [`image/${reference}@${digest}`],
        };
      }),
  };
}
