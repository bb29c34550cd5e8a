import type { CommandModule } from 'yargs';
import type { CliContext } from '../../cli-context';
import { withManifestFlags, type ManifestFlagArgs } from '../manifest-options';

type InitArgs = ManifestFlagArgs & { name: string; file: string };

/** `podmin init <name>`: write a minimal valid DaemonSet manifest. */
export function initCommand(ctx: CliContext): CommandModule<object, InitArgs> {
  return {
    command: 'init <name>',
    describe: 'Write a minimal valid apps/v1 DaemonSet (and optional Service) to a new file',
    builder: (y) =>
      withManifestFlags(
        y.positional('name', { type: 'string', demandOption: true, describe: 'DaemonSet name' }),
      )
        .option('file', {
          alias: 'f',
          type: 'string',
          default: 'daemonset.yaml',
          describe: 'Output file (never overwritten)',
        })
        .example(
          '$0 init web -g default --image hello:v1 --service',
          'One container and a Service on 443→8443',
        )
        .example(
          '$0 init app -g workers --namespace product --image web=registry.podmin.internal/apps/example/web:v1 --image sidecar=registry.podmin.internal/apps/example/sidecar:v1',
          'Two named containers',
        ),
    handler: async (args) => {
      const { initManifest } = await import('@podmin/cli-feature-manifest');
      await initManifest(
        {
          name: args.name,
          nodegroup: args.nodegroup,
          images: args.image,
          ports: args.port,
          file: args.file,
          ...(args.namespace !== undefined ? { namespace: args.namespace } : {}),
          ...(args.service ? { service: true } : {}),
          ...(args.cpu !== undefined ? { cpu: args.cpu } : {}),
          ...(args.memory !== undefined ? { memory: args.memory } : {}),
        },
        ctx.reporter,
      );
    },
  };
}
