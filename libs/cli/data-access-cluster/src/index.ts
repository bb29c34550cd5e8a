export * from './open';
