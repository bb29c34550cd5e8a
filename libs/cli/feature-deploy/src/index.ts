export * from './desired-state.ports';
export * from './commit';
export * from './deploy';
export * from './list';
export * from './history';
export * from './rollback';
