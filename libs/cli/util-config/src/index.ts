export * from './paths';
export * from './files';
export * from './contexts';
export * from './env';
