import type { CommandModule } from 'yargs';
import type { CliContext } from '../../cli-context';
import { commandWord, withCommands, type CommandGroup } from '../command-group';
import { addTrustCommand } from './add.command';
import { keygenTrustCommand } from './keygen.command';
import { listTrustCommand } from './list.command';
import { removeTrustCommand } from './remove.command';
import { signTrustCommand } from './sign.command';

/** What every `podmin trust` help ends with: where keys and the trust list live. */
export const TRUST_EPILOGUE =
  'The trust root is the secret store, not the bucket: the trusted deployers of a cluster are a list of public keys in Parameter Store at /<cluster>/_system/deployers, which nodes read and a bucket writer cannot change. While it exists, nodes apply only a deployments/index.json signed by one of them and keep running what they have otherwise. Local signing keys (Ed25519) live at <config>/trust/<cluster>/<name>.key (0600); an AWS KMS key (ECC_NIST_P256) signs without any private key on the machine.';

/** `podmin trust <command>`: the deployers whose signed desired state nodes run. */
export function trustCommand(ctx: CliContext): CommandGroup {
  const commands = [
    keygenTrustCommand(ctx),
    addTrustCommand(ctx),
    listTrustCommand(ctx),
    removeTrustCommand(ctx),
    signTrustCommand(ctx),
  ] as CommandModule<object, never>[];
  return {
    command: 'trust <command>',
    describe: 'Manage the trusted deployers whose signed desired state nodes run',
    subcommands: commands.map(commandWord),
    builder: (y) =>
      withCommands(y, commands)
        .demandCommand(1, 'Choose a trust command')
        .example('$0 trust keygen', 'Create your local signing key')
        .example('$0 trust add alice --public-key alice.pub', 'Trust it: enforcement turns on')
        .example(
          '$0 trust add ci --kms-key arn:aws:kms:eu-west-1:123456789012:key/…',
          'Trust a KMS key CI signs with',
        )
        .epilogue(TRUST_EPILOGUE),
    handler: () => undefined,
  };
}
