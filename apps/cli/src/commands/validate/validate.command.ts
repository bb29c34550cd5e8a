import type { CommandModule } from 'yargs';
import type { CliContext } from '../../cli-context';

interface ValidateArgs {
  file: string;
  image: string[];
  service?: boolean;
}

/** `podmin validate --file F`: structural validation without writing anything. */
export function validateCommand(ctx: CliContext): CommandModule<object, ValidateArgs> {
  return {
    command: 'validate',
    describe:
      'Validate a deployment manifest (DaemonSet and optional Service) without writing anything',
    builder: (y) =>
      y
        .option('file', {
          alias: 'f',
          type: 'string',
          demandOption: true,
          describe: 'Manifest file to validate',
        })
        .option('image', {
          type: 'string',
          array: true,
          default: [] as string[],
          describe: 'Image override: IMAGE or NAME=IMAGE (repeatable)',
        })
        .option('service', {
          type: 'boolean',
          describe: 'Require the manifest to contain a Service',
        })
        .example('$0 validate -f daemonset.yaml', 'Check a manifest')
        .example(
          '$0 validate -f daemonset.yaml --image web=hello:v2 --service',
          'Check with an override and require a Service',
        ),
    handler: async (args) => {
      const { validateManifest, describeDeployment } = await import('@podmin/cli-feature-manifest');
      const deployment = await validateManifest({
        file: args.file,
        images: args.image,
        ...(args.service ? { service: true } : {}),
      });
      for (const warning of deployment.warnings) ctx.reporter.warn(warning);
      ctx.reporter.result(`valid: ${describeDeployment(deployment)}`);
    },
  };
}
