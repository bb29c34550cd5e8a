import path from 'node:path';
import { loadPackageDefinition, type ServiceClientConstructor } from '@grpc/grpc-js';
import { loadSync, type Options, type PackageDefinition } from '@grpc/proto-loader';
import { protoRoot } from './proto-files';

/**
 * How every agent .proto is loaded, by the servers (Nest's gRPC transport), the clients and the
 * test servers alike, so messages decode as the generated ts-proto types say: camelCase fields,
 * absent fields as their defaults, uint64 as a number (generations stay far below 2^53) and
 * enums by name (ts-proto's stringEnums).
 */
export const AGENT_PROTO_LOADER_OPTIONS = Object.freeze({
  keepCase: false,
  defaults: true,
  longs: Number,
  enums: String,
} satisfies Options);

/** {@link AGENT_PROTO_LOADER_OPTIONS} with `protoRoot()` as the directory imports resolve in. */
export function agentProtoLoaderOptions(): Options {
  return { includeDirs: [protoRoot()], ...AGENT_PROTO_LOADER_OPTIONS };
}

/** Loads one .proto of `protoRoot()` (a `PROTO_FILES` entry) with the agent's one set of options. */
export function loadAgentProto(file: string): PackageDefinition {
  return loadSync(path.join(protoRoot(), file), agentProtoLoaderOptions());
}

/**
 * The grpc-js client constructor (with its `service` definition) of the service named
 * `qualifiedName` (e.g. `podmin.agent.v1.Coordinator`) in `file`, or undefined when the file has
 * no such service.
 */
export function agentProtoService(
  file: string,
  qualifiedName: string,
): ServiceClientConstructor | undefined {
  let node: unknown = loadPackageDefinition(loadAgentProto(file));
  for (const part of qualifiedName.split('.'))
    node = (node as Record<string, unknown> | undefined)?.[part];
  return typeof node === 'function' ? (node as ServiceClientConstructor) : undefined;
}
