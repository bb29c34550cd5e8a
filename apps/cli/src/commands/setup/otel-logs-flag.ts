import { UsageError } from '@podmin/cli-util-io';

/**
 * Checks `setup --otel-logs` before anything runs, so a bad value is an invocation error
 * (exit 2) naming each key and what it allows; the provider parses the same value again.
 */
export async function checkOtelLogsFlag(value: string): Promise<void> {
  const { parseOtelLogs } = await import('@podmin/cli-util-infra');
  const parsed = parseOtelLogs(value);
  if (!Array.isArray(parsed)) return;
  throw new UsageError(
    `checking setup flags: ${parsed.map((p) => `${p.field}: ${p.message}`).join('; ')}`,
    {
      showUsage: false,
      hint: 'use --otel-logs endpoint=https://HOST/v1/logs[,protocol=http|grpc][,mtls=true|false][,ca=s3://BUCKET/KEY][,headers-secret=true|false]',
    },
  );
}
