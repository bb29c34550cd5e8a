import type { CommandModule } from 'yargs';
import type { CliContext } from '../../cli-context';

interface BuildArgs {
  path: string;
  tag: string[];
  platform: string[];
  file?: string;
  pull?: boolean;
  'build-arg': string[];
}

// Repeatable flags are declared scalar (an array option would swallow the PATH positional)
// and collected here.
const asList = (value: string | string[]): string[] => [value].flat();

/** `podmin build [PATH] -t TAG`: package a Containerfile into the local image store. */
export function buildCommand(ctx: CliContext): CommandModule<object, BuildArgs> {
  return {
    command: 'build [path]',
    describe:
      'Build an image from a Containerfile that needs no commands run (FROM, COPY, ENV, CMD, …) into the local store',
    builder: (y) =>
      y
        .positional('path', { type: 'string', default: '.', describe: 'Build context directory' })
        .option('tag', {
          alias: 't',
          type: 'string',
          demandOption: true,
          coerce: asList,
          describe: 'Image name and tag, e.g. hello:v1 (repeatable)',
        })
        .option('platform', {
          type: 'string',
          default: [] as string[],
          coerce: asList,
          describe: 'Target platform(s), e.g. linux/amd64,linux/arm64 (default: this machine)',
        })
        .option('file', {
          alias: 'f',
          type: 'string',
          describe: 'Containerfile (default PATH/Containerfile, else PATH/Dockerfile)',
        })
        .option('pull', { type: 'boolean', describe: 'Pull the base image even when it is stored' })
        .option('build-arg', {
          type: 'string',
          default: [] as string[],
          coerce: asList,
          describe: 'Build argument NAME=value (repeatable)',
        })
        .example('$0 build -t hello:v1 .', 'Build for this machine')
        .example(
          '$0 build -t hello:v1 --platform linux/amd64,linux/arm64 .',
          'One image index for both architectures',
        ),
    handler: async (args) => {
      const { buildImage, RegistryClient } = await import('@podmin/cli-feature-image');
      const { LocalImageStore } = await import('@podmin/cli-data-access-image-store');
      const { formatReference } = await import('@podmin/util-oci');
      const result = await buildImage(
        {
          store: LocalImageStore.inCache(ctx.dirs.cache),
          registry: new RegistryClient(),
          reporter: ctx.reporter,
        },
        {
          context: args.path,
          tags: args.tag,
          platforms: args.platform,
          buildArgs: args['build-arg'],
          ...(args.file !== undefined ? { file: args.file } : {}),
          ...(args.pull === true ? { pull: true } : {}),
        },
      );
      for (const reference of result.references) ctx.reporter.result(formatReference(reference));
    },
  };
}
