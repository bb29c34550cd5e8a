import fs from 'node:fs';
import path from 'node:path';
import { agentProviderOf } from '@podmin/agent-data-access-node';
import type { AgentProcessDefinition } from '@podmin/agent-data-access-runtime';
import { Dataplane, type DataplaneOptions } from './dataplane';
import type { DataplaneProcessDeps } from './dataplane-runner';
import { DataplaneProcessModule } from './dataplane.module';
import {
  IprouteInterfaces,
  type DataplaneInterface,
  type InterfaceRole,
  type InterfaceSource,
} from './interfaces/interfaces';

// The process's parts, each in its own module; exported here too, as before.
export type { DataplaneProcessDeps, SnapshotWatch } from './dataplane-runner';
export { DataplaneGrpcController } from './dataplane.grpc-controller';
export { DataplaneProcessModule } from './dataplane.module';

/** An interface source keeping only interfaces with one of `roles`. */
export function onlyRoles(
  source: InterfaceSource,
  roles: readonly InterfaceRole[],
): InterfaceSource {
  return {
    list: async (): Promise<DataplaneInterface[]> =>
      (await source.list()).filter((i) => i.roles.some((r) => roles.includes(r))),
  };
}

/**
 * The committed object: `bpf/service_lb.o` beside the bundled program (tools/scripts/bundle.mjs
 * copies it), else the workspace's `bpf/obj/service_lb.o`.
 */
export function dataplaneObjectPath(): string {
  const candidates = [
    path.join(path.dirname(process.argv[1] ?? ''), 'bpf', 'service_lb.o'),
    path.join(__dirname, 'bpf', 'service_lb.o'),
    path.resolve(__dirname, '../../../../bpf/obj/service_lb.o'),
  ];
  return candidates.find((file) => fs.existsSync(file)) ?? (candidates[0] as string);
}

/**
 * The agent-dataplane process: the eBPF VIP dataplane fed by the local coordinator, the
 * Dataplane contract on its socket. On the local provider without a node stack (node address
 * `::1`) there is no Pod network, so it forwards nothing and says so; locally it attaches to Pod
 * veths only, leaving the host's own interfaces alone (there is no other node to reach).
 */
export const dataplaneProcess: AgentProcessDefinition = {
  service: 'dataplane',
  module: ({ config, logger, lifecycle, client }) => {
    const iproute = new IprouteInterfaces(config.ipv6Prefix);
    const options: DataplaneOptions = {
      objectPath: dataplaneObjectPath(),
      nodeAddress: config.nodeAddress,
      interfaces: agentProviderOf(config).dataplaneOnHostInterfaces
        ? iproute
        : onlyRoles(iproute, ['pod-veth']),
      logger,
    };
    const deps: DataplaneProcessDeps = {
      dataplane: new Dataplane(options),
      watch: client('coordinator'),
      logger,
      lifecycle,
      ...(config.nodeAddress === '::1'
        ? { noPodNetwork: 'this node has no Pod network (node address ::1)' }
        : {}),
    };
    return Promise.resolve(DataplaneProcessModule.register(deps));
  },
};
