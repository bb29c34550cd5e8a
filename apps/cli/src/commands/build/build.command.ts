import type { CommandModule } from 'yargs';
import type { CliContext } from '../../cli-context';
import { loadImageFeature } from '../image-feature';
import { runWithOutput, withOutputOption, type OutputArgs } from '../output-option';

interface BuildArgs extends OutputArgs {
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
      withOutputOption(
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
          .option('pull', {
            type: 'boolean',
            describe: 'Pull the base image even when it is stored',
          })
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
        [
          ['$0 build -t hello:v1 . -o json', 'Print {references, digest} and no progress'],
          ['$0 build -t hello:v1 . -o name', 'Print image/registry.podmin.internal/apps/hello:v1'],
        ],
      ),
    handler: (args) =>
      runWithOutput(ctx, args.output, async () => {
        const { lib, deps, formatReference } = await loadImageFeature(ctx);
        const result = await lib.buildImage(deps, {
          context: args.path,
          tags: args.tag,
          platforms: args.platform,
          buildArgs: args['build-arg'],
          ...(args.file !== undefined ? { file: args.file } : {}),
          ...(args.pull === true ? { pull: true } : {}),
        });
        const references = result.references.map((r) => formatReference(r));
        return {
          data: { references, digest: result.index.digest },
          table: () => references.map((r) => r + '\n').join(''),
          names: () => references.map((r) => `image/${r}`),
        };
      }),
  };
}
