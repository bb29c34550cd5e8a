import type { CommandModule } from 'yargs';
import type { CliContext } from '../../cli-context';
import { PROVIDER_CHOICES } from '../secret/secret-options';
import {
  SIGNING_EPILOGUE,
  bucketWithSigning,
  withSigningFlags,
  type SigningArgs,
} from '../signing-options';

interface InstallArgs extends SigningArgs {
  component: string;
  nodegroup: string;
  provider?: string;
}

/** `podmin install cloudflared -g NG`: the one built-in component, mirrored and committed. */
export function installCommand(ctx: CliContext): CommandModule<object, InstallArgs> {
  return {
    command: 'install <component>',
    describe:
      'Install a built-in component (only cloudflared) on every VM of a NodeGroup (nodes reconcile it asynchronously)',
    builder: (y) =>
      withSigningFlags(y)
        .positional('component', {
          type: 'string',
          demandOption: true,
          describe: 'The component: cloudflared (the Cloudflare Tunnel connector)',
        })
        .option('nodegroup', {
          alias: 'g',
          type: 'string',
          demandOption: true,
          describe: 'NodeGroup whose every VM runs the Pod',
        })
        .option('provider', {
          type: 'string',
          choices: PROVIDER_CHOICES,
          describe: "Secrets provider holding the tunnel token (default: the context's)",
        })
        .example(
          '$0 secret create tunnel-token --for cloudflared -n platform-cloudflared',
          'First store the tunnel token (asked for, hidden)',
        )
        .example('$0 install cloudflared -g edge', 'Then run the connector on every VM of edge')
        .epilogue(
          [
            'cloudflared runs a remotely managed Cloudflare Tunnel: its published application routes are configured at Cloudflare and may target Podmin Service DNS names (<service>.<namespace>.svc.cluster.local) directly.',
            '',
            'The tunnel token must exist at /<cluster>/platform-cloudflared/cloudflared/tunnel-token in the secrets provider (checked from metadata; its value is never read or printed). Without it nothing is written.',
            '',
            'The image is the Podmin-pinned multi-platform cloudflare/cloudflared index (version and digest from the dependency catalog). It is mirrored into mirror/docker.io/cloudflare/cloudflared when that digest is absent and reused otherwise; an upstream that answers another digest is refused.',
            '',
            'The static Pod platform-cloudflared/cloudflared runs as user 65532 with a read-only root filesystem, no privilege escalation, every capability dropped, resource limits, the token mounted read-only by the agent, and a liveness probe on /ready of its metrics port 2000. `podmin list` shows it with origin install/cloudflared. Re-running changes nothing.',
            '',
            SIGNING_EPILOGUE,
          ].join('\n'),
        ),
    handler: async (args) => {
      const { checkInstallRequest, installComponent } = await import('@podmin/cli-feature-install');
      checkInstallRequest(args);
      const { context, store, signed } = await bucketWithSigning(
        ctx,
        args,
        `installing ${args.component} in NodeGroup ${args.nodegroup}`,
      );
      const { resolveProvider } = await import('@podmin/cli-feature-secrets');
      const provider = resolveProvider(context, args.provider);
      const secrets = await ctx.secretStores(context)(provider);
      const { DependencyImageMirror, RegistryClient } = await import('@podmin/cli-feature-image');
      const { commitDeployment } = await import('@podmin/cli-feature-deploy');
      const { CLOUDFLARED_IMAGE, overridePin } = await import('@podmin/util-dependencies');
      const mirror = new DependencyImageMirror({
        store: await ctx.imageStore(),
        registry: new RegistryClient(
          ctx.env.testUpstreamRegistryUrl === undefined
            ? {}
            : { baseUrlOverride: ctx.env.testUpstreamRegistryUrl },
        ),
        reporter: ctx.reporter,
      });
      const result = await installComponent(
        {
          reporter: ctx.reporter,
          cluster: context.cluster,
          secrets,
          // ensurePublished reads only source, path and digest; the size is setup's bookkeeping.
          mirror: {
            ensureMirrored: (image) => mirror.ensurePublished(store, { ...image, size: 0 }),
          },
          commit: (payloads, options) => commitDeployment(store, payloads, options),
        },
        {
          component: args.component,
          nodegroup: args.nodegroup,
          ...signed,
          ...(ctx.env.testCloudflaredPin === undefined
            ? {}
            : { image: overridePin(CLOUDFLARED_IMAGE, ctx.env.testCloudflaredPin) }),
        },
      );
      const what = result.changed ? 'Committed' : 'Already committed (unchanged)';
      ctx.reporter.info(
        `${what}: ${result.key} (platform-cloudflared/cloudflared, ${result.image}) in cluster ${context.cluster} desired state. Every VM of NodeGroup ${args.nodegroup} reconciles it asynchronously; this does not mean the Pod is running.`,
      );
      ctx.reporter.result(result.key);
    },
  };
}
