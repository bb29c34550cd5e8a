export * from './grpc-error.filter';
export * from './grpc-service';
export * from './agent-client';
export * from './services-watch';
