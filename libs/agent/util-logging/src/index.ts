export * from './json-logger';
export * from './repeat-folder';
