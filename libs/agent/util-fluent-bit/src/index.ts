/** kubelet's container log names and the attributes derived from them. */
export * from './kubelet-log-name';
/** The node's Fluent Bit configuration renderer. */
export * from './fluent-bit-config';
/** The exporter headers secret reader. */
export * from './otel-headers';
