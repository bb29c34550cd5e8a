export * from './desired-index';
export * from './service-vip';
