import type { CommandModule } from 'yargs';
import type { CliContext } from '../../cli-context';
import { trustDeps } from '../signing-options';

interface AddArgs {
  name: string;
  'public-key'?: string;
  'kms-key'?: string;
  sign?: boolean;
}

/** `podmin trust add <name> --public-key FILE | --kms-key ARN`: trust a deployer's key. */
export function addTrustCommand(ctx: CliContext): CommandModule<object, AddArgs> {
  return {
    command: 'add <name>',
    describe: "Trust a deployer's public key (the first one turns enforcement on)",
    builder: (y) =>
      y
        .positional('name', {
          type: 'string',
          demandOption: true,
          describe: 'Deployer name (a DNS label) that its signatures carry',
        })
        .option('public-key', {
          type: 'string',
          requiresArg: true,
          describe: 'Public key file: Ed25519 (`podmin trust keygen`) or ECDSA P-256, PEM or DER',
        })
        .option('kms-key', {
          type: 'string',
          requiresArg: true,
          describe:
            'AWS KMS key ARN: spec ECC_NIST_P256, usage SIGN_VERIFY (its public key is read with kms:GetPublicKey)',
        })
        .option('sign', {
          type: 'boolean',
          describe:
            "Re-sign the current index as this deployer at once (needs its key: the KMS key, or its .key under <config>/trust/<cluster>/); without it the first deployer's add asks on a terminal",
        })
        .conflicts('public-key', 'kms-key')
        .check((a) => {
          if ((a['public-key'] === undefined) === (a['kms-key'] === undefined))
            throw new Error('give exactly one of --public-key FILE and --kms-key ARN');
          return true;
        })
        .example(
          '$0 trust add alice --public-key ~/.config/podmin/trust/demo/alice.pub',
          'Trust a key from `podmin trust keygen`',
        )
        .example(
          '$0 trust add ci --kms-key arn:aws:kms:eu-west-1:123456789012:key/1234abcd-…',
          'Trust a KMS key (CI signs with its role alone)',
        )
        .epilogue(
          'Adds the public key to the trust list in Parameter Store at /<cluster>/_system/deployers (the trust root: nodes read it there, a bucket writer cannot change it; not in the bucket). The first deployer turns enforcement on: nodes then refuse any deployments/index.json not signed by a trusted deployer, including the current one until it is re-signed (`podmin trust sign`, offered here) or a trusted deployer deploys. At most 10 deployers; a name or key already trusted is refused.',
        ),
    handler: async (args) => {
      const { addDeployer } = await import('@podmin/cli-feature-trust');
      await addDeployer(
        {
          name: args.name,
          ...(args['public-key'] === undefined ? {} : { publicKeyFile: args['public-key'] }),
          ...(args['kms-key'] === undefined ? {} : { kmsKeyArn: args['kms-key'] }),
          ...(args.sign ? { sign: true } : {}),
        },
        await trustDeps(ctx),
      );
    },
  };
}
