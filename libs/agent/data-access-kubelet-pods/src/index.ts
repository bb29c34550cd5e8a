export * from './kubelet-pods';
