export * from './atomic-file';
export * from './file-lock';
