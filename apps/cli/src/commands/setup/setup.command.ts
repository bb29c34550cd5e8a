import type { CommandModule } from 'yargs';
import type { CliContext } from '../../cli-context';
import { runWithOutput, withOutputOption, type OutputArgs } from '../output-option';

interface SetupArgs extends OutputArgs {
  nodegroup?: string[];
  'vpc-cidr'?: string;
  nat64?: string;
  yes?: boolean;
  'workload-ca-publish'?: string;
  'otel-logs'?: string;
  'agent-source'?: string;
}

/** `podmin setup`: create or update the cluster (the local provider: start this machine's node). */
export function setupCommand(ctx: CliContext): CommandModule<object, SetupArgs> {
  return {
    command: 'setup',
    describe:
      'Create or update the cluster (AWS: VPC, NodeGroups, NAT64 through OpenTofu/Terraform); on the local provider, start this machine as a node',
    builder: (y) =>
      withOutputOption(
        y
          .option('vpc-cidr', {
            type: 'string',
            describe:
              'AWS, required: the private IPv4 CIDR of the VPC (10/8, 172.16/12 or 192.168/16, /16 to /28); an untagged compatible VPC with exactly this primary CIDR is reused, none means one is created',
          })
          .option('nodegroup', {
            alias: 'g',
            type: 'string',
            array: true,
            describe:
              'AWS, repeatable and authoritative: NAME[,size=N,disk-size=GIB,instance-type=T,zone=Z,nat64=T] (defaults size=1, disk-size=20 (8..16384), instance-type=t4g.small, zone = first available; zone is a full name or one letter; nat64=T gives the NodeGroup a dedicated NAT64 instance). Local: the one NodeGroup this machine serves (default: default)',
          })
          .option('nat64', {
            type: 'string',
            describe:
              "AWS: EC2-backed NAT64 (stateful Jool) shared per zone; bare uses t4g.nano, --nat64=instance-type=TYPE another type. Setup reads each NAT64 AMI's kernel from Debian's image manifest and mirrors the matching podplane/jool-builds modules into the bucket; every setup replaces the NAT64 instances (launch before terminate)",
          })
          .option('yes', {
            alias: 'y',
            type: 'boolean',
            describe: 'Apply without asking (required when there is no terminal)',
          })
          .option('workload-ca-publish', {
            type: 'string',
            describe:
              'Also keep the workload CA bundle (PEM) at this exact S3 object: s3://BUCKET/KEY',
          })
          .option('otel-logs', {
            type: 'string',
            describe:
              "AWS: export container logs with Fluent Bit on every node: endpoint=URL[,protocol=http|grpc][,mtls=true][,ca=s3://BUCKET/KEY][,headers-secret=true]. endpoint is the exact https URL (OTLP/HTTP protobuf by default, OTLP/gRPC with protocol=grpc); mtls=true presents a client-only leaf from the workload CA; ca is an exact S3 object holding the server's private CA bundle (default: the OS trust store); headers-secret=true sends the headers stored with `podmin secret create otel-logs-headers --system`. Without it Fluent Bit is neither installed nor run",
          })
          .example(
            '$0 setup --vpc-cidr 10.0.0.0/16 -g default --otel-logs endpoint=https://otlp.example.com/v1/logs,headers-secret=true',
            'AWS: export container logs over OTLP/HTTP with headers from the otel-logs-headers secret',
          )
          .example(
            '$0 setup --vpc-cidr 10.0.0.0/16 --nat64 --nodegroup default --nodegroup workers,size=3,disk-size=100,instance-type=c8g.large,zone=b,nat64=t4g.small',
            'AWS: a VPC, two NodeGroups and NAT64 (shared in zone a, dedicated for workers in zone b)',
          )
          .option('agent-source', {
            type: 'string',
            describe:
              'AWS, for development: build the podmin-agent artifact (every agent program and what it loads) from this podmin checkout and publish it instead of the release matching this CLI',
          })
          .example('$0 setup --vpc-cidr 10.0.0.0/16 -g default -y', 'AWS: apply without asking')
          .example(
            '$0 setup --vpc-cidr 10.0.0.0/16 -g default --agent-source .',
            'AWS: run nodes on the agent built from this checkout',
          )
          .example(
            '$0 setup',
            'Local: store the cluster CAs and start podmin-agent for NodeGroup default',
          )
          .example('$0 setup -g workers', 'Local: serve NodeGroup workers instead'),
        [
          [
            '$0 setup -o json',
            "Local: print {cluster, provider, nodegroups, nodeRoot} (nodeRoot: the node's directory; null on AWS)",
          ],
          ['$0 setup -o name', 'Print cluster/<name>'],
        ],
      ).epilogue(
        'On AWS, setup checks the flags and the provider first, publishes the node dependencies (the podmin-agent artifact of this CLI version, or with --agent-source one built from that checkout), writes the module and its inputs under <podmin cache>/infrastructure/<cluster> and to tfstate/podmin.auto.tfvars.json in the bucket, stores the workload and cluster CAs create-only, then runs OpenTofu/Terraform (PODMIN_TF_CMD, else tofu, else terraform; 1.11 or newer) init, plan and, after confirmation, apply. Providers are cached in <podmin cache>/tf-plugins unless TF_PLUGIN_CACHE_DIR is set.',
      ),
    handler: (args) =>
      runWithOutput(ctx, args.output, async (_format, held) => {
        if (args['otel-logs'] !== undefined) {
          const { checkOtelLogsFlag } = await import('./otel-logs-flag');
          await checkOtelLogsFlag(args['otel-logs']);
        }
        const context = await ctx.currentContext();
        await ctx
          .provider(context)
          .lifecycle(context)
          .setup({
            ...(args.nodegroup === undefined ? {} : { nodegroups: args.nodegroup }),
            ...(args['vpc-cidr'] === undefined ? {} : { vpcCidr: args['vpc-cidr'] }),
            ...(args.nat64 === undefined ? {} : { nat64: args.nat64 }),
            ...(args['workload-ca-publish'] === undefined
              ? {}
              : { workloadCaPublish: args['workload-ca-publish'] }),
            ...(args['otel-logs'] === undefined ? {} : { otelLogs: args['otel-logs'] }),
            ...(args['agent-source'] === undefined ? {} : { agentSource: args['agent-source'] }),
            assumeYes: args.yes === true,
          });
        // The local provider reports the node's directory as its result line; in table format
        // it is already on stdout, in the others held back for the document.
        const nodeRoot = context.provider === 'local' ? (held()[0]?.trim() ?? null) : null;
        return {
          data: {
            cluster: context.cluster,
            provider: context.provider,
            // The names of -g NAME[,size=N,…]; the local node serves default unless told.
            nodegroups: (args.nodegroup ?? (context.provider === 'local' ? ['default'] : [])).map(
              (spec) => spec.split(',')[0] ?? spec,
            ),
            nodeRoot,
          },
          table: () => '',
          names: () => [`cluster/${context.cluster}`],
        };
      }),
  };
}
