import type { CommandModule } from 'yargs';
import type { CliContext } from '../../cli-context';
import { loadImageFeature } from '../image-feature';
import { runWithOutput, withOutputOption, type OutputArgs } from '../output-option';

declare const __PODMIN_VERSION__: string | undefined;

interface FetchArgs extends OutputArgs {
  arch: string[];
  'agent-source'?: string;
}

/** `podmin fetch`: download and verify the node dependencies into the local cache. */
export function fetchCommand(ctx: CliContext): CommandModule<object, FetchArgs> {
  return {
    command: 'fetch',
    describe:
      'Download and verify the node dependencies and pull the dependency images into the local cache (no context or bucket needed)',
    builder: (y) =>
      withOutputOption(
        y
          .option('arch', {
            type: 'string',
            array: true,
            default: [] as string[],
            describe: 'Architectures, comma-separated or repeated: amd64, arm64 (default: both)',
          })
          .option('agent-source', {
            type: 'string',
            describe:
              'Build the podmin-agent artifact from this podmin checkout instead of the published release',
          })
          .example('$0 fetch', 'Fetch every dependency for amd64 and arm64')
          .example('$0 fetch --arch arm64', 'Fetch only the arm64 files')
          .example('$0 fetch --agent-source .', 'Use an agent bundled from this checkout'),
        [
          [
            '$0 fetch -o json',
            'Print {files: [{name, arch, version, path, digest, size}], images: [{name, version, source, digest}]}',
          ],
          ['$0 fetch -o name', 'One file/<name>/<arch> and image/<source>@<digest> per line'],
        ],
      ),
    handler: (args) =>
      runWithOutput(ctx, args.output, async () => {
        const { fetchDependencySet, fetchResultLines } = await import('@podmin/cli-feature-fetch');
        const { lib, deps } = await loadImageFeature(ctx);
        const { releaseEndpointsUnder } = await import('@podmin/cli-data-access-dependencies');
        const images = new lib.DependencyImageMirror(deps);
        const result = await fetchDependencySet(
          {
            archs: args.arch,
            cacheDir: ctx.dirs.cache,
            cliVersion: typeof __PODMIN_VERSION__ === 'string' ? __PODMIN_VERSION__ : '0.0.0-dev',
            ...(args['agent-source'] !== undefined ? { agentSource: args['agent-source'] } : {}),
            ...(ctx.env.testDependencyBaseUrl === undefined
              ? {}
              : { endpoints: releaseEndpointsUnder(ctx.env.testDependencyBaseUrl) }),
            images,
          },
          ctx.reporter,
        );
        return {
          data: result,
          table: () =>
            fetchResultLines(result)
              .map((line) => line + '\n')
              .join(''),
          names: () => [
            ...result.files.map((f) => `file/${f.name}/${f.arch}`),
            ...result.images.map((i) => `image/${i.source}@${i.digest}`),
          ],
        };
      }),
  };
}
