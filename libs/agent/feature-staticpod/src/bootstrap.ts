import { openBucketStore, openSecretStores } from '@podmin/agent-data-access-node';
import type { AgentProcessDefinition } from '@podmin/agent-data-access-runtime';
import { secretSourceFor } from '@podmin/data-access-secrets';
import { StaticPodModule } from './staticpod.module';

/** The agent-staticpod process: index polling, verified payloads, secrets, static-Pod publication. */
export const staticPodProcess: AgentProcessDefinition = {
  service: 'staticpod',
  module: ({ config, env, logger, lifecycle, client }) => {
    const identity = client('identity');
    return Promise.resolve(
      StaticPodModule.register({
        config,
        logger,
        lifecycle,
        store: openBucketStore(config, env),
        secrets: secretSourceFor(openSecretStores(config, env)),
        identity: {
          ensure: (r) =>
            identity.ensureWorkload({
              pod: r.pod,
              namespace: r.namespace,
              service: r.service ?? '',
            }),
          remove: async (pod) => {
            await identity.removeWorkload({ pod });
          },
        },
      }),
    );
  },
};
