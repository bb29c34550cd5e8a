export * from './agent-config';
export * from './ipv6';
