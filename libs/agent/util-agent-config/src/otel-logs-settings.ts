import type { FieldProblem } from '@podmin/util-errors';
import { EXACT_OBJECT_KEY_RULE, parseExactS3Object } from '@podmin/util-names';

/**
 * What agent-identity does for Fluent Bit (`setup --otel-logs mtls=…,ca=…`, passed by user-data
 * through the environment like `--workload-ca-publish`). A bad value does not stop the agent:
 * collection and export failures must never stop kubelet or workloads, so log export is then
 * off (`mtls` false, no `ca`) and agent-identity logs `problems` once and shows them in health.
 */
export interface OtelLogsSettings {
  /** PODMIN_OTEL_LOGS_MTLS=true: keep Fluent Bit's client leaf under /run/podmin/telemetry. */
  readonly mtls: boolean;
  /** PODMIN_OTEL_LOGS_CA: the exact S3 object holding the exporter's private server-CA bundle. */
  readonly ca: { readonly bucket: string; readonly key: string; readonly url: string } | undefined;
  /** Why the variables were refused (log export is then off); empty when they were accepted. */
  readonly problems: readonly FieldProblem[];
}

/**
 * Reads PODMIN_OTEL_LOGS_MTLS (`true` or `false`; unset: false) and PODMIN_OTEL_LOGS_CA (an exact
 * `s3://BUCKET/KEY`; unset: none). Never throws: a bad value turns log export off and is
 * returned in `problems`, naming the variable and what it allows.
 */
export function parseOtelLogsSettings(
  env: Readonly<Record<string, string | undefined>>,
): OtelLogsSettings {
  const problems: FieldProblem[] = [];
  const mtlsText = env['PODMIN_OTEL_LOGS_MTLS'];
  if (mtlsText !== undefined && mtlsText !== 'true' && mtlsText !== 'false')
    problems.push({
      field: 'PODMIN_OTEL_LOGS_MTLS',
      message: `must be true or false, not ${JSON.stringify(mtlsText)}`,
    });
  const caText = env['PODMIN_OTEL_LOGS_CA'];
  let ca: OtelLogsSettings['ca'];
  if (caText !== undefined) {
    const parsed = parseExactS3Object(caText);
    if (parsed === undefined)
      problems.push({
        field: 'PODMIN_OTEL_LOGS_CA',
        message: `must be an exact object s3://BUCKET/KEY (a valid bucket name; a key of ${EXACT_OBJECT_KEY_RULE}), not ${JSON.stringify(caText)}`,
      });
    else ca = Object.freeze({ ...parsed, url: caText });
  }
  if (problems.length > 0)
    return Object.freeze({ mtls: false, ca: undefined, problems: Object.freeze(problems) });
  return Object.freeze({ mtls: mtlsText === 'true', ca, problems: Object.freeze([]) });
}
