import type { CommandModule } from 'yargs';
import type { CliContext } from '../../cli-context';
import { localUserName } from '../signing-options';

interface KeygenArgs {
  name?: string;
  force?: boolean;
}

/** `podmin trust keygen [--name NAME] [--force]`: a local Ed25519 signing key. */
export function keygenTrustCommand(ctx: CliContext): CommandModule<object, KeygenArgs> {
  return {
    command: 'keygen',
    describe: 'Create a local Ed25519 signing key for the current cluster',
    builder: (y) =>
      y
        .option('name', {
          type: 'string',
          requiresArg: true,
          describe: 'Deployer name (a DNS label); default: your user name made into one',
        })
        .option('force', {
          type: 'boolean',
          describe: 'Replace an existing key of that name (the old one can no longer sign)',
        })
        .example('$0 trust keygen', 'Writes <config>/trust/<cluster>/<user>.key and .pub')
        .example('$0 trust keygen --name alice', 'A key for deployer alice')
        .epilogue(
          'Writes the private key to <config>/trust/<cluster>/<name>.key (mode 0600, directory 0700) and its public key beside it as <name>.pub, and prints the .pub path. Nothing is sent anywhere: the key signs only once a trusted deployer runs `podmin trust add <name> --public-key <name>.pub`, which stores the public key in the secret store (the trust root; not the bucket). Deploys from this machine then sign with it by default (the one key in that directory).',
        ),
    handler: async (args) => {
      const { keygen } = await import('@podmin/cli-feature-trust');
      const context = await ctx.currentContext();
      await keygen(
        {
          ...(args.name === undefined ? {} : { name: args.name }),
          ...(args.force ? { force: true } : {}),
          userName: localUserName(),
        },
        { cluster: context.cluster, configDir: ctx.dirs.config, reporter: ctx.reporter },
      );
    },
  };
}
