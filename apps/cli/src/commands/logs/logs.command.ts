import type { CommandModule } from 'yargs';
import type { SourcedLine } from '@podmin/cli-feature-logs';
import { PodminError } from '@podmin/util-errors';
import type { CliContext } from '../../cli-context';
import { withDeploymentTarget, type DeploymentTargetArgs } from '../deployment-target';
import { parseDuration } from '../deploy/deploy.command';

type LogsArgs = DeploymentTargetArgs & {
  container?: string;
  follow?: boolean;
  since?: string;
  tail?: number;
  node?: string;
  timestamps?: boolean;
};

/** `podmin logs <name> -g NG`: what a deployment's containers printed, from kubelet's log files. */
export function logsCommand(ctx: CliContext): CommandModule<object, LogsArgs> {
  return {
    command: 'logs <name>',
    describe: "Print a deployment's container logs (local provider: the node's CRI log files)",
    builder: (y) =>
      withDeploymentTarget(y)
        .option('container', {
          alias: 'c',
          type: 'string',
          describe: 'Only this container (an init container too); default every regular one',
        })
        .option('follow', {
          alias: 'f',
          type: 'boolean',
          describe:
            'Keep printing new lines (across rotation, restarts and a rollout’s new Pod) until interrupted',
        })
        .option('since', {
          type: 'string',
          describe: 'Only lines newer than this (10s, 5m, 2h)',
        })
        .option('tail', {
          type: 'number',
          describe: 'Only the last N lines of each container (0 for none: with -f, only new lines)',
        })
        .option('node', {
          type: 'string',
          describe: 'Only this node (its ID, as in podmin status)',
        })
        .option('timestamps', {
          type: 'boolean',
          describe: 'Start each line with the time kubelet recorded (RFC 3339, nanoseconds)',
        })
        .check((a) => {
          if (a.since !== undefined && parseDuration(a.since) === undefined)
            throw new Error(
              `--since: ${JSON.stringify(a.since)} is not a duration; use a positive number with s, m or h (10s, 5m, 2h)`,
            );
          if (a.tail !== undefined && (!Number.isInteger(a.tail) || a.tail < 0))
            throw new Error(`--tail: ${String(a.tail)} is not a whole number of lines ≥ 0`);
          return true;
        })
        .example('$0 logs web -g default', 'Every container of every web Pod on the node')
        .example(
          '$0 logs web -g default -c app -f --tail 20',
          'The last 20 lines of app, then new ones',
        )
        .example(
          '$0 logs web -g default --since 10m',
          'What the containers printed in the last 10 minutes',
        )
        .epilogue(
          "Lines come from kubelet's CRI log files (/var/log/pods) of the current container instance; partial lines are rejoined, and with several containers or Pods (a rollout runs two) each line starts with [pod/container]. " +
            'On AWS, container logs stay on the nodes unless `podmin setup --otel-logs` exports them: the command says where they are and how to read them on a node.',
        ),
    handler: async (args) => {
      const context = await ctx.currentContext();
      const provider = ctx.provider(context);
      const what = `reading logs of ${args.nodegroup}/${args.name}`;
      const access = provider.containerLogs
        ? await provider.containerLogs(context, args.nodegroup)
        : { guidance: [`The ${context.provider} provider does not say where container logs are.`] };
      if ('guidance' in access) {
        for (const line of access.guidance) ctx.reporter.info(line);
        throw new PodminError(
          'NOT_FOUND',
          `${what}: the ${context.provider} provider's nodes are not readable from this machine`,
          { hint: 'See the lines above for where the logs are.' },
        );
      }
      const nodes =
        args.node === undefined ? access.nodes : access.nodes.filter((n) => n.nodeId === args.node);
      if (nodes.length === 0)
        throw new PodminError('NOT_FOUND', `${what}: no node ${JSON.stringify(args.node)}`, {
          hint: `Nodes of this NodeGroup: ${access.nodes.map((n) => n.nodeId).join(', ')}.`,
        });
      const logs = await import('@podmin/cli-feature-logs');
      const find = async () =>
        (
          await Promise.all(
            nodes.map((n) =>
              logs.findPodLogSources({
                manifestsDir: n.manifestsDir,
                podLogDir: n.podLogDir,
                nodeName: n.nodeName,
                nodegroup: args.nodegroup,
                name: args.name,
                ...(args.container === undefined ? {} : { container: args.container }),
              }),
            ),
          )
        ).flat();
      const sources = await find();
      if (sources.length === 0)
        ctx.reporter.warn(
          `${what}: no container has written a log yet (kubelet writes them under ${nodes.map((n) => n.podLogDir).join(', ')} once a container starts)`,
        );
      const read = {
        ...(args.since === undefined
          ? {}
          : { sinceMs: Date.now() - (parseDuration(args.since) ?? 0) }),
        ...(args.tail === undefined ? {} : { tail: args.tail }),
      };
      const format = (line: SourcedLine, all: typeof sources) =>
        `${args.timestamps ? `${line.time} ` : ''}${logs.linePrefix(line.source, all)}${line.text}`;
      if (!args.follow) {
        const lines = await logs.readPodLogs(sources, read);
        if (lines.length > 0) ctx.reporter.result(lines.map((l) => format(l, sources)).join('\n'));
        return;
      }
      const stop = new AbortController();
      const end = () => stop.abort();
      process.once('SIGINT', end);
      process.once('SIGTERM', end);
      let known = sources;
      try {
        await logs.followPodLogs(sources, {
          ...read,
          signal: stop.signal,
          rescan: async () => (known = await find()),
          onLine: (line) => ctx.reporter.result(format(line, known)),
        });
      } finally {
        process.off('SIGINT', end);
        process.off('SIGTERM', end);
      }
    },
  };
}
