import type { CommandModule } from 'yargs';
import { renderTable } from '@podmin/cli-util-io';
import type { CliContext } from '../../cli-context';
import { runWithOutput, withOutputOption, type OutputArgs } from '../output-option';
import { trustListDeps } from '../signing-options';

/** `podmin trust list`: the trusted deployers, and whether enforcement is on. */
export function listTrustCommand(ctx: CliContext): CommandModule<object, OutputArgs> {
  return {
    command: 'list',
    describe: 'List the trusted deployers and whether nodes enforce signatures',
    builder: (y) =>
      withOutputOption(
        y.epilogue(
          'Reads the trust list from Parameter Store at /<cluster>/_system/deployers (the trust root, not the bucket). Enforcement is on exactly while it holds a deployer.',
        ),
        [
          ['$0 trust list', 'NAME, ALGORITHM, FINGERPRINT, KMS KEY, ADDED'],
          [
            '$0 trust list -o json',
            'One JSON list of {name, algorithm, fingerprint, kmsKeyArn, added}',
          ],
          ['$0 trust list -o name', 'One deployer/<name> per line'],
        ],
      ),
    handler: (args) =>
      runWithOutput(ctx, args.output, async () => {
        const { listDeployers } = await import('@podmin/cli-feature-trust');
        const context = await ctx.currentContext();
        const { enforcement, deployers } = await listDeployers(trustListDeps(ctx, context));
        return {
          data: deployers,
          table: () =>
            enforcement
              ? `enforcement: on (${deployers.length} trusted deployer${deployers.length === 1 ? '' : 's'})\n` +
                renderTable(
                  ['NAME', 'ALGORITHM', 'FINGERPRINT', 'KMS KEY', 'ADDED'],
                  deployers.map((d) => [
                    d.name,
                    d.algorithm,
                    d.fingerprint,
                    d.kmsKeyArn ?? '-',
                    d.added,
                  ]),
                )
              : 'enforcement: off (no trusted deployers)\n',
          names: () => deployers.map((d) => `deployer/${d.name}`),
        };
      }),
  };
}
