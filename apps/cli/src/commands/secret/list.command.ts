import type { CommandModule } from 'yargs';
import { renderTable } from '@podmin/cli-util-io';
import type { CliContext } from '../../cli-context';
import { runWithOutput, withOutputOption, type OutputArgs } from '../output-option';
import { PROVIDER_CHOICES, loadSecrets } from './secret-options';

interface ListArgs extends OutputArgs {
  namespace?: string;
  for?: string;
  'all-namespaces'?: boolean;
  system?: boolean;
  provider?: string;
}

/** `podmin secret list`: secret names by namespace, Pod, key and provider; never values. */
export function listSecretsCommand(ctx: CliContext): CommandModule<object, ListArgs> {
  return {
    command: 'list',
    describe: 'List secret names (values are never shown)',
    builder: (y) =>
      withOutputOption(
        y
          .option('namespace', {
            alias: 'n',
            type: 'string',
            describe: 'Namespace (default "default")',
          })
          .option('for', { type: 'string', describe: 'Only the secrets of this Pod' })
          .option('all-namespaces', { alias: 'A', type: 'boolean', describe: 'Every namespace' })
          .option('system', {
            type: 'boolean',
            describe: 'The user-manageable system keys instead',
          })
          .option('provider', {
            type: 'string',
            choices: PROVIDER_CHOICES,
            describe: 'Only this provider (default: both)',
          }),
        [
          ['$0 secret list', 'NAMESPACE, POD, KEY, PROVIDER in namespace default'],
          ['$0 secret list -n product --for web', 'The secrets of one Pod'],
          ['$0 secret list -A -o json', 'Every namespace, as JSON'],
          ['$0 secret list -o name', 'One secret/<namespace>/<pod>/<key> per line'],
        ],
      ),
    handler: (args) =>
      runWithOutput(ctx, args.output, async () => {
        const { lib, deps } = await loadSecrets(ctx);
        const rows = await lib.listSecrets(
          {
            ...(args.namespace === undefined ? {} : { namespace: args.namespace }),
            ...(args.for === undefined ? {} : { pod: args.for }),
            ...(args['all-namespaces'] ? { allNamespaces: true } : {}),
            ...(args.system ? { system: true } : {}),
            ...(args.provider === undefined ? {} : { provider: args.provider }),
          },
          deps,
        );
        return {
          data: rows,
          table: () =>
            renderTable(
              ['NAMESPACE', 'POD', 'KEY', 'PROVIDER'],
              rows.map((r) => [r.namespace, r.pod, r.key, r.provider]),
            ),
          names: () => rows.map((r) => `secret/${r.namespace}/${r.pod}/${r.key}`),
        };
      }),
  };
}
