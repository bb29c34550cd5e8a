export * from './local-node';
