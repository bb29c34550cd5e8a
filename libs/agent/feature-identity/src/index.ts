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
/** The node's log-export identity and the exporter's CA bundle under /run/podmin/telemetry. */
export * from './telemetry-identity';
/** agent-identity's maintenance loop for the log exporter (leaf, CA bundle, restarts). */
export * from './telemetry-maintenance';
/** Fluent Bit's restart through systemd, and the node without host services. */
export * from './adapters/systemd-log-exporter';
/** The reader of the exporter's exact `ca=` object. */
export * from './adapters/object-store-ca-source';
/** The `--workload-ca-publish` adapter on an object store and its URL parser. */
export * from './adapters/object-store-external-bundle';
/** The agent-identity process: its service, gRPC controller, Nest module and definition. */
export * from './identity.service';
export * from './identity.grpc-controller';
export * from './identity.module';
export * from './identity.process';
