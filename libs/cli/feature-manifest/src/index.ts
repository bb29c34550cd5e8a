export * from './manifest-file';
export * from './manifest-commands';
