export * from './staticpod.ports';
export * from './node-paths';
export * from './pod-transform';
export * from './reconciler';
export * from './reconcile-loop';
