import { agentProviderOf, openBucketStore } from '@podmin/agent-data-access-node';
import type { AgentProcessDefinition } from '@podmin/agent-data-access-runtime';
import { HELLO_INTERVAL_MS, renewMarginMs } from '@podmin/agent-util-config';
import { formatIpv6, parseIpv6 } from '@podmin/util-names';
import { PodminError } from '@podmin/util-errors';
import { identityNodeLeaves } from '../adapters/identity-node-leaf';
import { mtlsTransport } from '../adapters/mtls-transport';
import { systemElectionTimer, systemMonotonicClock } from '../adapters/system-clocks';
import { EndpointTable } from '../coordination/endpoint-table';
import { KubeletReadiness } from '../readiness/kubelet-readiness';
import { Coordinator } from './coordinator';
import { CoordinatorModule } from './coordinator.module';
import { systemElector } from '../adapters/system-elector';

/**
 * The agent-coordinator process: the election on `dns/leader.json` under this node's ID and
 * coordination address `[node IPv6]:port`, the kubelet readiness watch, the mTLS coordination
 * server with its leaf from agent-identity, and the Coordinator contract for agent-dns and
 * agent-dataplane.
 */
export const coordinatorProcess: AgentProcessDefinition = {
  service: 'coordinator',
  module: ({ config, env, logger, lifecycle, client }) => {
    const groups = parseIpv6(config.nodeAddress);
    if (groups === undefined)
      throw new PodminError(
        'INVALID_ARGUMENT',
        `serving coordination: the node address ${JSON.stringify(config.nodeAddress)} is not IPv6`,
        { hint: 'set PODMIN_NODE_ADDRESS to the node IPv6 address' },
      );
    const host = formatIpv6(groups);
    const addr = `[${host}]:${config.coordinationPort}`;
    const store = openBucketStore(config, env);
    const { leaseMs, pollMs } = config.election;
    const elector = systemElector(store, logger, {
      id: config.nodeId,
      addr,
      // The configuration checked that this margin leaves leaders their duty window.
      timing: { leaseMs, pollMs, renewMarginMs: renewMarginMs(leaseMs) },
    });
    const readiness = new KubeletReadiness(
      { monotonic: systemMonotonicClock, timer: systemElectionTimer, log: logger },
      { socketPath: config.kubeletPodsSocket, timing: { holdMs: leaseMs } },
    );
    const coordinator = new Coordinator(
      {
        store,
        elector,
        readiness,
        endpoints: new EndpointTable(
          { monotonic: systemMonotonicClock, log: logger },
          { leaseMs, allowUniqueLocal: agentProviderOf(config).allowsUniqueLocalPrefix },
        ),
        transport: mtlsTransport({
          host,
          port: config.coordinationPort,
          cluster: config.cluster,
          leaves: identityNodeLeaves(client('identity')),
          log: logger,
        }),
        monotonic: systemMonotonicClock,
        log: logger,
        health: (healthy, detail) => lifecycle.reportHealth(healthy, detail),
        // The Date of S3's answers, or the mtime of a file just written locally: the election
        // reads or writes `dns/leader.json` every poll, so the sample is never older than that.
        serverTime: { lastServerTime: () => store.lastServerTime?.() },
      },
      {
        cluster: config.cluster,
        nodeId: config.nodeId,
        nodegroup: config.nodegroup,
        prefix: config.ipv6Prefix,
        // Followers report at the election's poll; a short lease in tests shortens both.
        helloIntervalMs: Math.min(HELLO_INTERVAL_MS, pollMs),
        snapshotIntervalMs: pollMs,
      },
    );
    return Promise.resolve(CoordinatorModule.register(coordinator, lifecycle));
  },
};
