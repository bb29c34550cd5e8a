export * from './desired-index';
