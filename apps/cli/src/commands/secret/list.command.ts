import type { CommandModule } from 'yargs';
import { renderTable } from '@podmin/cli-util-io';
import type { CliContext } from '../../cli-context';
import { PROVIDER_CHOICES, loadSecrets } from './secret-options';

interface ListArgs {
  namespace?: string;
  for?: string;
  'all-namespaces'?: boolean;
  system?: boolean;
  provider?: string;
  output: string;
}

/** `podmin secret list`: secret names by namespace, Pod, key and provider; never values. */
export function listSecretsCommand(ctx: CliContext): CommandModule<object, ListArgs> {
  return {
    command: 'list',
    describe: 'List secret names (values are never shown)',
    builder: (y) =>
      y
        .option('namespace', {
          alias: 'n',
          type: 'string',
          describe: 'Namespace (default "default")',
        })
        .option('for', { type: 'string', describe: 'Only the secrets of this Pod' })
        .option('all-namespaces', { alias: 'A', type: 'boolean', describe: 'Every namespace' })
        .option('system', { type: 'boolean', describe: 'The user-manageable system keys instead' })
        .option('provider', {
          type: 'string',
          choices: PROVIDER_CHOICES,
          describe: 'Only this provider (default: both)',
        })
        .option('output', {
          alias: 'o',
          type: 'string',
          choices: ['table', 'json'],
          default: 'table',
          describe: 'Output format',
        })
        .example('$0 secret list', 'NAMESPACE, POD, KEY, PROVIDER in namespace default')
        .example('$0 secret list -n product --for web', 'The secrets of one Pod')
        .example('$0 secret list -A -o json', 'Every namespace, as JSON'),
    handler: async (args) => {
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
      if (args.output === 'json') {
        ctx.reporter.result(JSON.stringify(rows, null, 2));
        return;
      }
      ctx.reporter.result(
        renderTable(
          ['NAMESPACE', 'POD', 'KEY', 'PROVIDER'],
          rows.map((r) => [r.namespace, r.pod, r.key, r.provider]),
        ),
      );
    },
  };
}
