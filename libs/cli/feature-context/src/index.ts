export * from './context.ports';
export * from './connect';
export * from './connect-rules';
