/** CoordinationError. */
export * from './coordination-error';
/** Authorizing a peer by its certificate's SPIFFE URI and IP SANs. */
export * from './peer-identity';
/** mTLS credentials: renewing server credentials, address-bound client credentials. */
export * from './credentials';
/** The leader's table of node reports. */
export * from './endpoint-table';
/** The leader's Hello handler. */
export * from './leader-hello-handler';
