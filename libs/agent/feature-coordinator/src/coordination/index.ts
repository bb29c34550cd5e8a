/** CoordinationError. */
export * from './coordination-error';
/** Authorizing a peer by its certificate's SPIFFE URI and IP SANs. */
export * from './peer-identity';
/** mTLS credentials: renewing server credentials, address-bound client credentials. */
export * from './credentials';
/** The coordination server (own TLS layer, grpc-js behind it). */
export * from './coordination-server';
/** The follower's client. */
export * from './coordination-client';
/** The leader's table of node reports. */
export * from './endpoint-table';
/** The leader's Hello handler. */
export * from './leader-hello-handler';
