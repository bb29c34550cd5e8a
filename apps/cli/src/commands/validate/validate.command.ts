import type { CommandModule } from 'yargs';
import type { CliContext } from '../../cli-context';
import { preflightDeps } from '../preflight-deps';

interface ValidateArgs {
  file: string;
  image: string[];
  service?: boolean;
  preflight?: boolean;
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
        .option('preflight', {
          type: 'boolean',
          describe:
            "Also run deploy's preflight against the current context (published images and their architectures, annotated secrets, Service selection), committing nothing",
        })
        .example('$0 validate -f daemonset.yaml', 'Check a manifest')
        .example(
          '$0 validate -f daemonset.yaml --preflight',
          'Also check the current cluster has what the nodes will need',
        )
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
      if (args.preflight === true) {
        const { assertPreflight, payloadCacheIn } = await import('@podmin/cli-feature-deploy');
        const { context, store } = await ctx.currentBucket();
        const deps = preflightDeps(ctx, context, store, payloadCacheIn(ctx.dirs.cache));
        for (const warning of await assertPreflight(deps, deployment)) ctx.reporter.warn(warning);
        ctx.reporter.result(
          `valid: ${describeDeployment(deployment)}; preflight passed against cluster ${context.cluster}`,
        );
        return;
      }
      ctx.reporter.result(`valid: ${describeDeployment(deployment)}`);
    },
  };
}
