import type { CommandModule } from 'yargs';
import type { CliContext } from '../../cli-context';
import { runWithOutput, withOutputOption, type OutputArgs } from '../output-option';

/** `podmin version`: this CLI's version and the runtime it runs on (no context needed). */
export function versionCommand(
  ctx: CliContext,
  version: string,
): CommandModule<object, OutputArgs> {
  return {
    command: 'version',
    describe: 'Print the CLI version (as --version does) and the Node.js runtime and platform',
    builder: (y) =>
      withOutputOption(y, [
        ['$0 version', 'The version alone, as --version prints it'],
        ['$0 version -o json', 'Print {version, node, platform, arch}'],
        ['$0 version -o name', 'Print version/<version>'],
      ]),
    handler: (args) =>
      runWithOutput(ctx, args.output, () => {
        const data = {
          version,
          node: process.version,
          platform: process.platform,
          arch: process.arch,
        };
        return Promise.resolve({
          data,
          table: () => version,
          names: () => [`version/${version}`],
        });
      }),
  };
}
