export * from './strategy';
export * from './state';
export * from './report';
export * from './planner';
