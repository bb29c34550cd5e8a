import type { CommandModule } from 'yargs';
import type { CliContext } from '../../cli-context';
import { trustDeps } from '../signing-options';

/** `podmin trust remove <name> [--yes]`: stop trusting a deployer. */
export function removeTrustCommand(
  ctx: CliContext,
): CommandModule<object, { name: string; yes?: boolean }> {
  return {
    command: 'remove <name>',
    describe: 'Stop trusting a deployer (removing the last one turns enforcement off)',
    builder: (y) =>
      y
        .positional('name', { type: 'string', demandOption: true, describe: 'Deployer name' })
        .option('yes', {
          alias: 'y',
          type: 'boolean',
          describe: 'Remove the last deployer (enforcement off) without asking',
        })
        .example('$0 trust remove alice', 'Nodes refuse what alice signs from their next poll')
        .example('$0 trust remove ci --yes', 'The last one, in a script: enforcement off')
        .epilogue(
          'Rewrites the trust list in Parameter Store at /<cluster>/_system/deployers (the trust root, not the bucket). Removing the last deployer deletes it, which turns enforcement off: it asks first on a terminal and needs --yes otherwise. An unknown name changes nothing. Local key files are left as they are.',
        ),
    handler: async (args) => {
      const { removeDeployer } = await import('@podmin/cli-feature-trust');
      await removeDeployer(
        { name: args.name, ...(args.yes ? { yes: true } : {}) },
        await trustDeps(ctx),
      );
    },
  };
}
