export * from './agent-provider';
export * from './aws.provider';
export * from './local.provider';
export * from './registry';
export * from './open';
export * from './imds';
