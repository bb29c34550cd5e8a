import { GetObjectCommand, HeadObjectCommand } from '@aws-sdk/client-s3';
import type { S3Client } from '@aws-sdk/client-s3';
import { Readable } from 'node:stream';
import { ObjectTooLargeError, translateS3Error } from '@podmin/data-access-object-store';
import { readableBody } from '../object-body';
import { formatRange } from '../range';
import type { ByteRange, OpenedObject, RegistryStore, UnsatisfiableRange } from '../registry.ports';

/**
 * The registry's bucket port over S3: bounded reads, ranged GetObject streamed straight from
 * the response body, and HeadObject. SDK errors are translated once, here.
 */
export class S3RegistryStore implements RegistryStore {
  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
  ) {}

  /** Reads a whole object of at most `maxBytes`, refusing larger ones before reading them. */
  async readBounded(key: string, maxBytes: number): Promise<Buffer> {
    const doing = `reading ${this.describe(key)}`;
    const response = await this.client
      .send(new GetObjectCommand({ Bucket: this.bucket, Key: key }))
      .catch((err: unknown) => {
        throw translateS3Error(err, doing);
      });
    const body = asReadable(response.Body, doing);
    const size = response.ContentLength;
    if (size !== undefined && size > maxBytes) {
      body.destroy();
      throw new ObjectTooLargeError(doing, maxBytes, size);
    }
    const chunks: Buffer[] = [];
    let total = 0;
    try {
      for await (const chunk of body) {
        const buffer = chunk as Buffer;
        total += buffer.length;
        if (total > maxBytes) {
          body.destroy();
          throw new ObjectTooLargeError(doing, maxBytes);
        }
        chunks.push(buffer);
      }
    } catch (err) {
      throw translateS3Error(err, doing);
    }
    return Buffer.concat(chunks, total);
  }

  /** Opens an object or one range of it; the body streams from S3 without buffering. */
  async openRead(key: string, range?: ByteRange): Promise<OpenedObject | UnsatisfiableRange> {
    const doing = `opening ${this.describe(key)}`;
    let response;
    try {
      response = await this.client.send(
        new GetObjectCommand({
          Bucket: this.bucket,
          Key: key,
          ...(range === undefined ? {} : { Range: formatRange(range) }),
        }),
      );
    } catch (err) {
      if (isInvalidRange(err)) {
        const size = await this.stat(key).then((s) => s.size);
        return { kind: 'unsatisfiable', size };
      }
      throw translateS3Error(err, doing);
    }
    const body = readableBody(asReadable(response.Body, doing));
    const etag = response.ETag ?? '';
    const contentRange = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(response.ContentRange ?? '');
    if (contentRange !== null) {
      const [, start = '0', end = '0', size = '0'] = contentRange;
      return {
        kind: 'opened',
        body,
        etag,
        start: Number(start),
        end: Number(end),
        size: Number(size),
      };
    }
    const size = response.ContentLength ?? 0;
    return { kind: 'opened', body, etag, start: 0, end: size - 1, size };
  }

  /** Size and ETag from HeadObject. */
  async stat(key: string): Promise<{ size: number; etag: string }> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return { size: head.ContentLength ?? 0, etag: head.ETag ?? '' };
    } catch (err) {
      throw translateS3Error(err, `inspecting ${this.describe(key)}`);
    }
  }

  private describe(key: string): string {
    return `object ${JSON.stringify(key)} in bucket ${this.bucket}`;
  }
}

function asReadable(body: unknown, doing: string): Readable {
  if (body instanceof Readable) {
    return body;
  }
  throw translateS3Error(new Error('the response has no streaming body'), doing);
}

function isInvalidRange(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const shape = err as { name?: unknown; Code?: unknown; $metadata?: { httpStatusCode?: unknown } };
  return (
    shape.name === 'InvalidRange' ||
    shape.Code === 'InvalidRange' ||
    shape.$metadata?.httpStatusCode === 416
  );
}
