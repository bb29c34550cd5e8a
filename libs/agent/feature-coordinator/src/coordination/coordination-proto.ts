import type { Client, ChannelCredentials, ChannelOptions, ServiceDefinition } from '@grpc/grpc-js';
import {
  PROTO_FILES,
  agentProtoService,
  admissionOf,
  admissionToProto,
  reportOfProto,
  reportToProto,
  type coordination,
} from '@podmin/agent-contracts';
import type { HelloAnswer, HelloReport } from '../coordinator.ports';
import { CoordinationError } from './coordination-error';

/** A client of the Coordination service as grpc-js builds it from the .proto. */
export type CoordinationClientConstructor = new (
  address: string,
  creds: ChannelCredentials,
  options?: ChannelOptions,
) => Client;

/** The loaded Coordination service: its definition (for a Server) and client constructor. */
export interface CoordinationService {
  readonly definition: ServiceDefinition;
  readonly Client: CoordinationClientConstructor;
}

let loaded: CoordinationService | undefined;

/**
 * Loads `coordination.proto` once with the contracts' proto loader, in their ts-proto shapes:
 * camelCase fields, enums as names, uint64 as numbers, defaults filled.
 */
export function coordinationService(): CoordinationService {
  if (loaded) return loaded;
  const ctor = agentProtoService(PROTO_FILES.coordination, 'podmin.agent.v1.Coordination') as
    (CoordinationClientConstructor & { service: ServiceDefinition }) | undefined;
  if (ctor === undefined) {
    throw new CoordinationError(
      'INTERNAL',
      `loading ${PROTO_FILES.coordination}: no service podmin.agent.v1.Coordination`,
    );
  }
  loaded = { definition: ctor.service, Client: ctor };
  return loaded;
}

/** The port's view of a decoded HelloRequest. */
export function reportOf(request: coordination.HelloRequest): HelloReport {
  return {
    nodeId: request.nodeId,
    nodegroup: request.nodegroup,
    prefix: request.prefix,
    endpoints: (request.endpoints ?? []).map((e) => ({
      namespace: e.namespace,
      pod: e.pod,
      labels: { ...(e.labels ?? {}) },
      address: e.address,
    })),
    knownRevision: request.knownRevision,
    leaving: request.leaving,
    rollouts: (request.rollouts ?? []).map(reportOfProto),
  };
}

/** The HelloResponse of a handler's answer. */
export function responseOf(answer: HelloAnswer): coordination.HelloResponse {
  return {
    snapshot: answer.snapshot,
    unchanged: answer.snapshot === undefined,
    leaderId: answer.leaderId,
    refused: answer.refused.map((r) => ({ address: r.address, reason: r.reason })),
    admissions: answer.admissions.map(admissionToProto),
  };
}

/** A decoded HelloResponse in the contract's types (proto-loader gives `null` for an absent message). */
export function normalizeResponse(
  response: coordination.HelloResponse,
): coordination.HelloResponse {
  return {
    snapshot: response.snapshot ?? undefined,
    unchanged: response.unchanged,
    leaderId: response.leaderId,
    refused: response.refused ?? [],
    admissions: response.admissions ?? [],
  };
}

/** The HelloRequest a follower sends for its report. */
export function requestOf(report: HelloReport): coordination.HelloRequest {
  return {
    nodeId: report.nodeId,
    nodegroup: report.nodegroup,
    prefix: report.prefix,
    endpoints: report.endpoints.map((e) => ({
      namespace: e.namespace,
      pod: e.pod,
      labels: { ...e.labels },
      address: e.address,
    })),
    knownRevision: report.knownRevision,
    leaving: report.leaving,
    rollouts: report.rollouts.map(reportToProto),
  };
}

/** The port's view of a leader's HelloResponse. */
export function answerOf(response: coordination.HelloResponse): HelloAnswer {
  const normal = normalizeResponse(response);
  return {
    snapshot: normal.unchanged ? undefined : normal.snapshot,
    leaderId: normal.leaderId,
    refused: normal.refused.map((r) => ({ address: r.address, reason: r.reason })),
    admissions: normal.admissions.map(admissionOf),
  };
}
