import type { CommandModule } from 'yargs';
import type { SecretValueInput } from '@podmin/cli-feature-secrets';
import type { CliContext } from '../../cli-context';
import { resolveSigning, withSigningFlags, type SigningArgs } from '../signing-options';
import {
  loadSecrets,
  toWriteRequest,
  withSecretWrite,
  type SecretWriteArgs,
} from './secret-options';

type UpdateSecretArgs = SecretWriteArgs & SigningArgs & { nodegroup?: string; restart?: boolean };

/**
 * `podmin secret update <key> [--restart --for NAME -g NG]`: replace the value of an existing
 * secret, then optionally restart the deployment whose Pod reads it (`rollout restart`).
 */
export function updateSecretCommand(
  ctx: CliContext,
  input?: SecretValueInput,
): CommandModule<object, UpdateSecretArgs> {
  return {
    command: 'update <key>',
    describe: 'Replace the value of an existing secret',
    builder: (y) =>
      withSigningFlags(withSecretWrite(y))
        .option('nodegroup', {
          alias: 'g',
          type: 'string',
          describe: 'With --restart: NodeGroup of the deployment named by --for',
        })
        .option('restart', {
          type: 'boolean',
          describe:
            'After the update, restart the deployment --for names in NodeGroup -g (as `podmin rollout restart`), so its Pods read the new value',
        })
        .check((a) => {
          const signs =
            a['signing-key'] !== undefined || a['kms-key'] !== undefined || a.signer !== undefined;
          if (signs && a.restart !== true)
            throw new Error(
              '--signing-key, --kms-key and --signer sign the commit of --restart; use them with --restart',
            );
          if (a.restart !== true) return true;
          if (a.system === true)
            throw new Error('--restart restarts a deployment; it cannot be used with --system');
          if (a.for === undefined || a.nodegroup === undefined)
            throw new Error(
              '--restart needs the deployment whose Pod reads the secret: --for NAME -g NODEGROUP',
            );
          return true;
        })
        .example([
          [
            '$0 secret update database-url --for web -n product --from-file ./db-url.txt',
            'From a file',
          ],
          [
            '$0 secret update log-level --for web',
            'Prompt for the value without echoing it (on a terminal)',
          ],
          [
            '$0 secret update api-key --for web -g default --from-file key.txt --restart',
            'Then restart web in NodeGroup default so its Pods read the new value',
          ],
          [
            '$0 secret update otel-logs-headers --system --from-stdin < headers.json',
            'The log exporter headers',
          ],
        ]),
    handler: async (args) => {
      const { lib, deps } = await loadSecrets(ctx, input);
      const restart =
        args.restart && args.for !== undefined && args.nodegroup !== undefined
          ? { nodegroup: args.nodegroup, name: args.for }
          : undefined;
      if (restart === undefined) {
        await lib.updateSecret(toWriteRequest(args), deps);
        return;
      }
      const { committedEntry, restartRollout } = await import('@podmin/cli-feature-deploy');
      const bucket = await ctx.currentBucket();
      // Refuse an unknown deployment, and an unsigned restart a signing cluster would refuse,
      // before the value changes, not after.
      await committedEntry(bucket.store, restart, 'updating the secret to restart');
      const signing = await resolveSigning(
        ctx,
        bucket.context,
        args,
        `restarting ${restart.nodegroup}/${restart.name}`,
      );
      await lib.updateSecret(toWriteRequest(args), deps);
      await restartRollout(
        {
          openBucket: () => Promise.resolve(bucket),
          reporter: ctx.reporter,
          progress: (line) => ctx.reporter.info(line),
        },
        restart,
        signing === undefined ? {} : { signing },
      );
    },
  };
}
