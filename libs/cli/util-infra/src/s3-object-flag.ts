import type { FieldProblem } from '@podmin/util-errors';
import { EXACT_OBJECT_KEY_RULE, isExactObjectKey, parseS3ObjectUrl } from '@podmin/util-names';

/** The one external S3 object the leader keeps the workload CA bundle at. */
export interface WorkloadCaPublish {
  bucket: string;
  key: string;
  /** The flag's `s3://BUCKET/KEY`, as the agent takes it. */
  url: string;
}

/**
 * Parses `--workload-ca-publish s3://BUCKET/KEY` for AWS: a valid bucket name and a key of
 * `/`-separated segments of `[A-Za-z0-9!_.()-]`, none empty, `.` or `..`. Returns the
 * location, or the problem naming the flag and what is allowed.
 */
export function parseWorkloadCaPublish(url: string): WorkloadCaPublish | FieldProblem {
  return parseExactObject(url, '--workload-ca-publish');
}

/**
 * One exact S3 object `s3://BUCKET/KEY` that becomes an exact IAM resource and a quoted
 * user-data value: what `--workload-ca-publish` and `--otel-logs ca=` accept.
 */
export function parseExactObject(url: string, field: string): WorkloadCaPublish | FieldProblem {
  const parsed = parseS3ObjectUrl(url);
  if (parsed === undefined) {
    return {
      field,
      message: `${JSON.stringify(url)} is not s3://BUCKET/KEY with a valid S3 bucket name and a non-empty key`,
    };
  }
  // The key becomes an exact IAM and endpoint policy ARN and a single-quoted shell value and
  // systemd environment entry in user data.
  if (!isExactObjectKey(parsed.key)) {
    return {
      field,
      message: `${JSON.stringify(url)}: the key must be ${EXACT_OBJECT_KEY_RULE} (no *, ?, $ or quotes: it becomes an exact IAM resource)`,
    };
  }
  return { ...parsed, url };
}
