export * from './cri-log';
export * from './pod-logs';
export * from './follow';
