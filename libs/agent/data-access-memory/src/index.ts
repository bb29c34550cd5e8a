export * from './clean-pages';
