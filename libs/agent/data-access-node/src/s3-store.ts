import type { ObjectStore } from '@podmin/data-access-object-store';
import type { ProcessEnv } from './agent-provider';

/** The S3 endpoint override of an emulator or S3-compatible server, if any. */
export function s3EndpointOf(env: ProcessEnv): string | undefined {
  return env['AWS_ENDPOINT_URL_S3'] ?? env['AWS_ENDPOINT_URL'];
}

/** An S3 bucket in `region` (on the endpoint override, path-style, when one is set). */
export async function openS3Store(
  region: string,
  bucket: string,
  env: ProcessEnv,
  dualStack = false,
): Promise<ObjectStore> {
  const { S3ObjectStore, createS3Client } = await import('@podmin/data-access-object-store');
  const endpoint = s3EndpointOf(env);
  return new S3ObjectStore({
    client: createS3Client({
      region,
      ...(endpoint ? { endpoint } : {}),
      ...(dualStack ? { dualStack: true } : {}),
    }),
    bucket,
  });
}
