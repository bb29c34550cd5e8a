export * from './fault-backoff';
