export * from './local-node';
export * from './node-stack';
