export * from './run-agent-process';
