import fs from 'node:fs';
import path from 'node:path';

/** Generated types, controllers and clients of agent-staticpod. */
export * as staticpod from './generated/podmin/agent/v1/staticpod';
/** Generated types, controllers and clients of agent-identity. */
export * as identity from './generated/podmin/agent/v1/identity';

/** The protobuf package of every agent contract. */
export const AGENT_PROTO_PACKAGE = 'podmin.agent.v1';

/** The .proto files of the agent contracts, relative to `protoRoot()`. */
export const PROTO_FILES = {
  staticpod: 'podmin/agent/v1/staticpod.proto',
  identity: 'podmin/agent/v1/identity.proto',
} as const;

/**
 * Directory holding the .proto files at run time: `proto/` beside a bundled program
 * (tools/scripts/bundle.mjs copies them), else this library's source tree.
 */
export function protoRoot(): string {
  const candidates = [path.join(__dirname, 'proto'), path.join(__dirname, '..', 'proto')];
  const found = candidates.find((dir) => fs.existsSync(path.join(dir, PROTO_FILES.staticpod)));
  if (!found)
    throw new Error(`locating the agent .proto files: none of ${candidates.join(', ')} has them`);
  return found;
}
