/** The `identity/ca.json` document: shape, strict parser, canonical writer, key verification. */
export * from './ca-state';
/** The CA rotation cycle as a pure state machine. */
export * from './ca-rotation';
/** Ports of the identity services. */
export * from './identity.ports';
/** IdentityError. */
export * from './identity-error';
/** Leader-only writer of `identity/ca.json` and the external bundle. */
export * from './workload-ca.rotator';
/** Every agent's verified reader of the workload CA. */
export * from './workload-ca.trust';
/** Workload identity generations on the node's tmpfs. */
export * from './workload-identity.service';
/** The `--workload-ca-publish` adapter on an object store and its URL parser. */
export * from './adapters/object-store-external-bundle';
/** The agent-identity process: its service, gRPC controller, Nest module and definition. */
export * from './identity.service';
export * from './identity.grpc-controller';
export * from './identity.module';
export * from './identity.process';
