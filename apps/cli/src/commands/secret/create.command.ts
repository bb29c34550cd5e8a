import { secretValueCommand } from './secret-value-command';

/** `podmin secret create <key>`: create a secret for a pod (or the allowlisted system key). */
export const createSecretCommand = secretValueCommand({
  command: 'create <key>',
  describe: 'Create a secret for a Pod (or the allowlisted system key)',
  examples: [
    [
      '$0 secret create database-url --for web -n product --from-file ./db-url.txt',
      'From a file, in the default secrets provider',
    ],
    [
      'printf %s "$TOKEN" | $0 secret create oauth-token --for web --provider aws-secrets-manager --from-stdin',
      'From stdin, in Secrets Manager',
    ],
    [
      '$0 secret create otel-logs-headers --system --from-file headers.json',
      'Log exporter headers: a JSON object of strings',
    ],
  ],
  operation: 'createSecret',
});
