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
      const deployment = await prepareDeployment({
        name: args.name,
        nodegroup: args.nodegroup,
        images: args.image,
        ports: args.port,
        ...(args.file !== undefined ? { file: args.file } : {}),
        ...(args.namespace !== undefined ? { namespace: args.namespace } : {}),
        ...(args.service ? { service: true } : {}),
        ...(args.cpu !== undefined ? { cpu: args.cpu } : {}),
        ...(args.memory !== undefined ? { memory: args.memory } : {}),
      });
      for (const warning of deployment.warnings) ctx.reporter.warn(warning);
      const { context, store } = await ctx.currentBucket();
      const { commitDeployment } = await import('@podmin/cli-feature-deploy');
      const result = await commitDeployment(store, {
        name: deployment.name,
        nodegroup: deployment.nodegroup,
        podYaml: deployment.podYaml,
        ...(deployment.service
          ? {
              service: {
                name: deployment.service.name,
                namespace: deployment.service.namespace,
                yaml: deployment.service.yaml,
              },
            }
          : {}),
      });
      for (const key of result.repaired)
        ctx.reporter.warn(
          `Repaired ${key}: the object stored there did not match the digest its key names, so deploy rewrote it with the right bytes`,
        );
      const what = result.changed ? 'Committed' : 'Already committed (unchanged)';
      ctx.reporter.info(
        `${what}: ${result.key} in cluster ${context.cluster} desired state. Nodes in NodeGroup ${deployment.nodegroup} reconcile it asynchronously; this does not mean the Pod is running.`,
      );
      ctx.reporter.result(result.key);
    },
  };
}
