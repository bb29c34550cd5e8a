export * from './podmin-error';
export * from './escape';
