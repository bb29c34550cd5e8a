import { secretValueCommand } from './secret-value-command';

/** `podmin secret update <key>`: replace the value of an existing secret. */
export const updateSecretCommand = secretValueCommand({
  command: 'update <key>',
  describe: 'Replace the value of an existing secret',
  examples: [
    ['$0 secret update database-url --for web -n product --from-file ./db-url.txt', 'From a file'],
    [
      '$0 secret update log-level --for web',
      'Prompt for the value without echoing it (on a terminal)',
    ],
    [
      '$0 secret update otel-logs-headers --system --from-stdin < headers.json',
      'The log exporter headers',
    ],
  ],
  operation: 'updateSecret',
});
