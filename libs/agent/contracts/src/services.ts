import type { CoordinatorClient } from './generated/podmin/agent/v1/coordinator';
import type { DataplaneClient } from './generated/podmin/agent/v1/dataplane';
import type { DnsClient } from './generated/podmin/agent/v1/dns';
import type { IdentityClient } from './generated/podmin/agent/v1/identity';
import type { RegistryClient } from './generated/podmin/agent/v1/registry';
import type { StaticPodClient } from './generated/podmin/agent/v1/staticpod';

/** How one agent service process is reached: its contract file, gRPC service and health name. */
export interface AgentServiceContract {
  /** Short name; also the socket name (`<name>.sock`) and the bundle suffix (`agent-<name>`). */
  readonly name: string;
  /** The .proto file relative to `protoRoot()`. */
  readonly protoFile: string;
  /** The gRPC service inside package `podmin.agent.v1`. */
  readonly service: string;
  /** Fully qualified name the standard health service reports. */
  readonly healthName: string;
}

/** Every agent service process's contract, by name. */
export const AGENT_SERVICES = {
  staticpod: {
    name: 'staticpod',
    protoFile: 'podmin/agent/v1/staticpod.proto',
    service: 'StaticPod',
    healthName: 'podmin.agent.v1.StaticPod',
  },
  identity: {
    name: 'identity',
    protoFile: 'podmin/agent/v1/identity.proto',
    service: 'Identity',
    healthName: 'podmin.agent.v1.Identity',
  },
  registry: {
    name: 'registry',
    protoFile: 'podmin/agent/v1/registry.proto',
    service: 'Registry',
    healthName: 'podmin.agent.v1.Registry',
  },
  coordinator: {
    name: 'coordinator',
    protoFile: 'podmin/agent/v1/coordinator.proto',
    service: 'Coordinator',
    healthName: 'podmin.agent.v1.Coordinator',
  },
  dns: {
    name: 'dns',
    protoFile: 'podmin/agent/v1/dns.proto',
    service: 'Dns',
    healthName: 'podmin.agent.v1.Dns',
  },
  dataplane: {
    name: 'dataplane',
    protoFile: 'podmin/agent/v1/dataplane.proto',
    service: 'Dataplane',
    healthName: 'podmin.agent.v1.Dataplane',
  },
} as const satisfies Record<string, AgentServiceContract>;

/** Names of the agent service processes. */
export type AgentServiceName = keyof typeof AGENT_SERVICES;

/** The generated (ts-proto) client interface of each agent service. */
export interface AgentClients {
  staticpod: StaticPodClient;
  identity: IdentityClient;
  registry: RegistryClient;
  coordinator: CoordinatorClient;
  dns: DnsClient;
  dataplane: DataplaneClient;
}
