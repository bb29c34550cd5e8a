export * from './desired-index';
export * from './service-vip';
export * from './history';
export * from './index-edit';
export * from './index-signature';
