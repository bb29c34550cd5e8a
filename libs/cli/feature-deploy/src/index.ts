export * from './desired-state.ports';
export * from './commit';
export * from './deploy';
export * from './list';
export * from './status';
export * from './wait';
export * from './rollout';
