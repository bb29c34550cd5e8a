import type { CommandModule } from 'yargs';
import type { CliContext } from '../../cli-context';
import { withManifestFlags, type ManifestFlagArgs } from '../manifest-options';
import { runWithOutput, withOutputOption, type OutputArgs } from '../output-option';
import { preflightDeps, preflightSources } from '../preflight-deps';
import {
  SIGNING_EPILOGUE,
  resolveSigning,
  withSigningFlags,
  type SigningArgs,
} from '../signing-options';

type DeployArgs = ManifestFlagArgs &
  OutputArgs &
  SigningArgs & {
    name: string;
    file?: string;
    wait?: boolean;
    timeout: string;
    rollbackOnFailure?: boolean;
    preflight: boolean;
    pin: boolean;
  };

/** `90s`, `5m`, `1h` or plain seconds → milliseconds; undefined when it is none of those. */
export function parseDuration(text: string): number | undefined {
  const m = /^(\d{1,6})(s|m|h)?$/.exec(text.trim());
  if (!m) return undefined;
  const unit = m[2] === 'h' ? 3_600_000 : m[2] === 'm' ? 60_000 : 1000;
  const ms = Number(m[1]) * unit;
  return ms > 0 ? ms : undefined;
}

/** `podmin deploy <name> -g NG`: commit desired state for a deployment. */
export function deployCommand(ctx: CliContext): CommandModule<object, DeployArgs> {
  return {
    command: 'deploy <name>',
    describe:
      'Commit a deployment to the cluster desired state (nodes reconcile it asynchronously)',
    builder: (y) =>
      withOutputOption(
        withManifestFlags(
          withSigningFlags(y).positional('name', {
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
          .option('wait', {
            type: 'boolean',
            describe:
              'After the commit, wait until every live node of the NodeGroup reports the new revision Ready (from node receipts); exit non-zero naming each node that is not and why',
          })
          .option('timeout', {
            type: 'string',
            default: '5m',
            describe: 'How long --wait waits: 90s, 5m, 1h',
          })
          .option('rollback-on-failure', {
            type: 'boolean',
            describe:
              'With --wait: when the wait fails, re-commit the entry this deploy replaced (or delete the deployment if it was new), then wait for that',
          })
          .option('preflight', {
            type: 'boolean',
            default: true,
            describe:
              "Before committing, check that every image is published for the NodeGroup's architectures and every annotated secret exists (and warn when the Service selects no Pod); --no-preflight skips it",
          })
          .option('pin', {
            type: 'boolean',
            default: true,
            describe:
              "Commit every image by digest (name@sha256:…), resolved from the bucket's index.json of its repository; the tag is kept in the podmin.dev/image-tags annotation. --no-pin commits tags as given: UNSAFE, whoever can write the bucket can move a tag and change what every node runs",
          })
          .check((a) => {
            if (a['rollback-on-failure'] === true && a.wait !== true)
              throw new Error('--rollback-on-failure needs --wait');
            if (parseDuration(String(a.timeout)) === undefined)
              throw new Error(
                `--timeout: ${JSON.stringify(a.timeout)} is not a duration like 90s, 5m or 1h`,
              );
            return true;
          })
          .example(
            '$0 deploy web -g default --image hello:v1 --service',
            'Built-in manifest with a Service',
          )
          .example(
            '$0 deploy web -g default -f daemonset.yaml --image web=hello:v2',
            'A manifest file with an image override',
          )
          .example(
            '$0 deploy web -g default --image hello:v2 --no-preflight',
            'Commit without checking the bucket and secret store first',
          )
          .example(
            '$0 deploy web -g default --image hello:v2 --no-pin',
            'Commit the tag, not its digest (unsafe: a moved tag changes what runs)',
          )
          .example(
            '$0 deploy web -g default --image hello:v2 --wait --timeout 3m --rollback-on-failure',
            'Wait until every live node runs it Ready; put the previous revision back if not',
          )
          .example(
            '$0 deploy web -g default --image hello:v2 --kms-key arn:aws:kms:eu-west-1:123456789012:key/… --signer ci',
            'Sign the index write with a trusted KMS key (see podmin trust)',
          )
          .epilogue(SIGNING_EPILOGUE),
        [
          [
            '$0 deploy -o json web -g default -f web.yaml',
            'Print {key, changed} (with --wait also revision and ready) and no progress',
          ],
          ['$0 deploy -o name web -g default -f web.yaml', 'Print deployment/default/web'],
        ],
        { legacyText: true },
      ),
    handler: (args) =>
      runWithOutput(ctx, args.output, async (format) => {
        const { prepareDeployment } = await import('@podmin/cli-feature-manifest');
        const {
          deploy,
          deployAndWait,
          recommitPrevious,
          assertPreflight,
          payloadCacheIn,
          preparePreflight,
        } = await import('@podmin/cli-feature-deploy');
        let opened: Awaited<ReturnType<CliContext['currentBucket']>> | undefined;
        // With json or yaml, stdout carries one document and stderr only warnings and errors.
        const quiet = format === 'json' || format === 'yaml';
        const reporter = quiet
          ? {
              info: () => undefined,
              warn: (m: string) => ctx.reporter.warn(m),
              result: () => undefined,
            }
          : ctx.reporter;
        const signing = await resolveSigning(
          ctx,
          await ctx.currentContext(),
          args,
          `deploying ${args.nodegroup}/${args.name}`,
        );
        const commitOptions = signing === undefined ? {} : { signing };
        const deps = {
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
          openBucket: async () => (opened = await ctx.currentBucket()),
          reporter,
          pin: args.pin,
          ...(args.preflight
            ? {
                preflight: (
                  deployment: Parameters<typeof assertPreflight>[1],
                  _store: unknown,
                  reads: Parameters<typeof assertPreflight>[2],
                ) => {
                  if (opened === undefined) throw new Error('preflight before the bucket is open');
                  const { context, store } = opened;
                  const cache = payloadCacheIn(ctx.dirs.cache);
                  return assertPreflight(
                    preflightDeps(ctx, context, store, cache),
                    deployment,
                    reads,
                  );
                },
                preparePreflight: async (deployment: Parameters<typeof assertPreflight>[1]) =>
                  preparePreflight(preflightSources(ctx, await ctx.currentContext()), deployment),
              }
            : {}),
        };
        // The table is the committed key, which deploy itself reports.
        const view = <T extends { key: string }>(data: T) => ({
          data,
          table: () => '',
          names: () => [`deployment/${data.key}`],
        });
        if (!args.wait) {
          const result = await deploy(deps, commitOptions);
          return view({ key: result.key, changed: result.changed });
        }
        const result = await deployAndWait(
          {
            ...deps,
            progress: (line) => reporter.info(line),
            // A re-commit after a failed wait is an index write too: signed like the deploy.
            recommit: (store) => recommitPrevious(store, (m) => reporter.warn(m), commitOptions),
          },
          {
            ...commitOptions,
            timeoutMs: parseDuration(args.timeout) ?? 300_000,
            ...(args.rollbackOnFailure ? { rollbackOnFailure: true } : {}),
          },
        );
        return view({
          key: result.commit.key,
          changed: result.commit.changed,
          revision: result.revision,
          ready: result.wait.message,
        });
      }),
  };
}
