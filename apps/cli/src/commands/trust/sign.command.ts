import type { CommandModule } from 'yargs';
import { PodminError } from '@podmin/util-errors';
import type { CliContext } from '../../cli-context';
import { resolveSigning, trustDeps, withSigningFlags, type SigningArgs } from '../signing-options';

/** `podmin trust sign`: re-sign the current index, entries unchanged. */
export function signTrustCommand(
  ctx: CliContext,
): CommandModule<object, SigningArgs & { yes?: boolean }> {
  return {
    command: 'sign',
    describe: 'Re-sign the current desired-state index unchanged as a trusted deployer',
    builder: (y) =>
      withSigningFlags(y)
        .option('yes', {
          alias: 'y',
          type: 'boolean',
          describe: 'Sign an index that is not trusted now without asking (after reviewing it)',
        })
        .example('$0 trust sign', 'With the one key `podmin trust keygen` wrote')
        .example(
          '$0 trust sign --kms-key arn:aws:kms:eu-west-1:123456789012:key/… --signer ci',
          'With a KMS key',
        )
        .example('$0 trust sign --yes', 'In a script, after reviewing `podmin list`')
        .epilogue(
          'Signs deployments/index.json as it is (after `podmin trust add` turned enforcement on, or after an unsigned write), through the same compare-and-swap as deploy, with a generation above the last. The signer must be a trusted deployer (`podmin trust list`, read from the secret store, not the bucket) for nodes to accept it.\n\nAn index that verifies now is re-signed at once, as is any index while enforcement is off (nodes verify nothing yet; a note says so). Under enforcement, one that does not verify (unsigned, edited by hand, signed by a removed deployer) is what nodes refuse, and signing it makes them run whatever a bucket writer put there: the command names the reason and the entries, asks on a terminal and needs --yes otherwise, and signs exactly the entries it showed (an index that changed meanwhile is refused, nothing written).',
        ),
    handler: async (args) => {
      const { signIndex } = await import('@podmin/cli-feature-trust');
      const deps = await trustDeps(ctx);
      const context = await ctx.currentContext();
      const signing = await resolveSigning(ctx, context, args, 'signing the index');
      if (signing === undefined) {
        throw new PodminError(
          'INVALID_ARGUMENT',
          'signing the index: no signing key is configured',
          {
            hint: 'pass --signing-key FILE or --kms-key ARN --signer NAME, or create a key with `podmin trust keygen`',
          },
        );
      }
      await signIndex(signing, deps, args.yes ? { yes: true } : {});
    },
  };
}
