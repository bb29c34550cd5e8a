export * from './supervisor';
export * from './health-server';
export * from './agent';
export * from './scheduling';
