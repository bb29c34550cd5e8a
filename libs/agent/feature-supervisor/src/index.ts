export * from './supervisor';
export * from './launcher';
export * from './health-server';
export * from './agent';
export * from './scheduling';
