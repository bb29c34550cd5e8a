export * from './agent-config';
export * from './ipv6';
export * from './process-config';
