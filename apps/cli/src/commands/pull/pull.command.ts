import type { CommandModule } from 'yargs';
import type { CliContext } from '../../cli-context';

interface PullArgs {
  source: string;
  'plain-http'?: boolean;
}

/** `podmin pull SOURCE`: import a complete remote image into the local store. */
export function pullCommand(ctx: CliContext): CommandModule<object, PullArgs> {
  return {
    command: 'pull <source>',
    describe: 'Import a complete image (every platform) from a registry into the local store',
    builder: (y) =>
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
    handler: async (args) => {
      const { pullImage, RegistryClient } = await import('@podmin/cli-feature-image');
      const { LocalImageStore } = await import('@podmin/cli-data-access-image-store');
      const { formatReference } = await import('@podmin/util-oci');
      const pulled = await pullImage(
        {
          store: LocalImageStore.inCache(ctx.dirs.cache),
          registry: new RegistryClient({ plainHttp: args['plain-http'] === true }),
          reporter: ctx.reporter,
        },
        args.source,
      );
      ctx.reporter.result(
        `${formatReference({ ...pulled.reference, digest: undefined })}@${pulled.descriptor.digest}`,
      );
    },
  };
}
