import type { CommandModule } from 'yargs';
import type { CliContext } from '../../cli-context';
import { withManifestFlags, type ManifestFlagArgs } from '../manifest-options';

type DeployArgs = ManifestFlagArgs & { name: string; file?: string };

/** `podmin deploy <name> -g NG`: commit desired state for a deployment. */
export function deployCommand(ctx: CliContext): CommandModule<object, DeployArgs> {
  return {
    command: 'deploy <name>',
    describe:
      'Commit a deployment to the cluster desired state (nodes reconcile it asynchronously)',
    builder: (y) =>
      withManifestFlags(
        y.positional('name', {
          type: 'string',
          demandOption: true,
          describe: 'Deployment (DaemonSet) name',
        }),
      )
        .option('file', {
          alias: 'f',
          type: 'string',
          describe: 'Manifest file instead of the built-in one',
        })
        .example(
          '$0 deploy web -g default --image hello:v1 --service',
          'Built-in manifest with a Service',
        )
        .example(
          '$0 deploy web -g default -f daemonset.yaml --image web=hello:v2',
          'A manifest file with an image override',
        ),
    handler: async (args) => {
      const { prepareDeployment } = await import('@podmin/cli-feature-manifest');
      const { deploy } = await import('@podmin/cli-feature-deploy');
      await deploy({
        prepare: () =>
          prepareDeployment({
            name: args.name,
            nodegroup: args.nodegroup,
            images: args.image,
            ports: args.port,
            ...(args.file !== undefined ? { file: args.file } : {}),
            ...(args.namespace !== undefined ? { namespace: args.namespace } : {}),
            ...(args.service ? { service: true } : {}),
            ...(args.cpu !== undefined ? { cpu: args.cpu } : {}),
            ...(args.memory !== undefined ? { memory: args.memory } : {}),
          }),
        openBucket: () => ctx.currentBucket(),
        reporter: ctx.reporter,
      });
    },
  };
}
