export * from './context.ports';
export * from './connect';
