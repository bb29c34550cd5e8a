export * from './agent-config';
export * from './process-config';
