export * from './paths';
export * from './contexts';
export * from './env';
export * from './providers';
