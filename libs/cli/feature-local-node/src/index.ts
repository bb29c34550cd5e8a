export * from './local-node';
export * from './node-stack';
export * from './local-cluster';
