export * from './podmin-error';
