export * from './agent-config';
export * from './flag-checks';
export * from './process-config';
export * from './otel-logs-settings';
export * from './provider-rules';
export * from './agent-constants';
export * from './telemetry-layout';
