import { openBucketStore, openSecretStores } from '@podmin/agent-data-access-node';
import type { AgentProcessDefinition } from '@podmin/agent-data-access-runtime';
import { secretSourceFor } from '@podmin/data-access-secrets';
import { admissionOf, reportToProto } from '@podmin/agent-contracts';
import { kubeletPodsView } from './receipts/receipt-writer';
import { StaticPodModule } from './staticpod.module';

declare const __PODMIN_VERSION__: string | undefined;

/** The agent-staticpod process: index polling, verified payloads, secrets, static-Pod publication. */
export const staticPodProcess: AgentProcessDefinition = {
  service: 'staticpod',
  module: ({ config, env, logger, lifecycle, client }) => {
    const identity = client('identity');
    const coordinator = client('coordinator');
    const store = openBucketStore(config, env);
    const secretStores = openSecretStores(config, env);
    const kubelet = kubeletPodsView(config.kubeletPodsSocket);
    return Promise.resolve(
      StaticPodModule.register({
        config,
        logger,
        lifecycle,
        store,
        secrets: secretSourceFor(secretStores),
        // The trust list lives where a bucket writer cannot change it (DESIGN.md §9).
        trustList: secretStores['aws-parameter-store'],
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
        rollouts: {
          kubelet,
          coordination: {
            sync: async (state) => {
              const answer = await coordinator.syncRollouts({
                reports: state.reports.map(reportToProto),
                draining: [...state.draining],
                indexEtag: state.indexEtag,
              });
              return {
                admissions: (answer.admissions ?? []).map(admissionOf),
                leaderKnown: answer.leaderKnown,
              };
            },
          },
        },
        receipts: {
          sink: store,
          kubelet,
          agentVersion: typeof __PODMIN_VERSION__ === 'string' ? __PODMIN_VERSION__ : '0.0.0-dev',
        },
      }),
    );
  },
};
