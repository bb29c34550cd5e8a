import type { CommandModule } from 'yargs';
import { ProviderRegistry } from '@podmin/cli-util-config';
import type { CliContext } from '../../cli-context';
import type { CliProvider } from '@podmin/cli-providers';

interface ConnectArgs {
  cluster: string;
  provider: string;
  region?: string;
  bucket?: string;
  profile?: string;
  'secrets-provider'?: string;
}

/** `podmin connect <cluster>`: create or verify the bucket, save and select the context. */
export function connectCommand(ctx: CliContext): CommandModule<object, ConnectArgs> {
  return {
    command: 'connect <cluster>',
    describe: 'Connect to a cluster: create or verify its bucket, then save and select the context',
    builder: (y) =>
      y
        .positional('cluster', {
          type: 'string',
          demandOption: true,
          describe: 'Cluster ID (DNS label)',
        })
        .option('provider', {
          type: 'string',
          choices: ctx.providers.names,
          demandOption: true,
          describe: 'Cloud provider',
        })
        .option('region', { type: 'string', describe: 'AWS region (default: AWS_REGION)' })
        .option('bucket', {
          type: 'string',
          describe:
            'Bucket name (aws, default podmin-<cluster>) or directory (local, default under the data directory)',
        })
        .option('profile', { type: 'string', describe: 'AWS shared-config profile' })
        .option('secrets-provider', {
          type: 'string',
          choices: ['aws-parameter-store', 'aws-secrets-manager', 'local'],
          describe: 'Default secrets provider of this context (default aws-parameter-store)',
        })
        .example('$0 connect demo --provider local', 'A local cluster whose bucket is a directory')
        .example(
          '$0 connect prod --provider aws --region eu-west-1 --bucket acme-podmin-prod',
          'An AWS cluster',
        ),
    handler: async (args) => {
      const { connect } = await import('@podmin/cli-feature-context');
      const providers = Object.fromEntries(
        await Promise.all(
          ctx.providers.names.map(async (name) => [name, await ctx.providers.get(name).connect()]),
        ),
      ) as Record<string, Awaited<ReturnType<CliProvider['connect']>>>;
      await connect(
        {
          cluster: args.cluster,
          provider: args.provider,
          ...(args.region !== undefined ? { region: args.region } : {}),
          ...(args.bucket !== undefined ? { bucket: args.bucket } : {}),
          ...(args.profile !== undefined ? { profile: args.profile } : {}),
          ...(args['secrets-provider'] !== undefined
            ? { secretsProvider: args['secrets-provider'] }
            : {}),
          ...(ctx.env.awsRegion !== undefined ? { defaultRegion: ctx.env.awsRegion } : {}),
        },
        {
          ...ctx,
          providers: new ProviderRegistry(providers),
        },
      );
    },
  };
}
