export * from './reporter';
export * from './terminal-reporter';
export * from './format';
export * from './progress-format';
export * from './fd-writer';
export * from './exit-codes';
export * from './suggest';
export * from './output';
