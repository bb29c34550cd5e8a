import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import type { GetObjectCommandOutput, S3Client } from '@aws-sdk/client-s3';
import { Readable } from 'node:stream';
import { PodminError } from '@podmin/util-errors';
import { assertValidRange, formatRange, resolveRange } from './byte-range';
import { ObjectTooLargeError, describeObject } from './errors';
import { readableBody } from './object-body';
import type {
  ConditionalGetResult,
  GetOptions,
  ListPage,
  ListedObject,
  ObjectBody,
  ObjectHead,
  ObjectStore,
  OpenReadOptions,
  OpenReadResult,
  ServerTimeSample,
  StoredObject,
} from './object-store.port';
import { DEFAULT_MAX_READ_BYTES, assertValidKey } from './object-store.port';
import { sdkErrorDetails, translateS3Error } from './s3-errors';
import { SERVER_DATE_MIDDLEWARE_OPTIONS, serverDateMiddleware } from './s3-server-date';

/** What an S3-backed store needs: a configured client and the bucket name. */
export interface S3ObjectStoreOptions {
  client: S3Client;
  bucket: string;
  /** This process's wall clock, epoch milliseconds, for server-time samples (default `Date.now`). */
  now?: () => number;
}

const PAGE_SIZE = 1000;

/** The one method of a command's middleware stack the server-date observer uses. */
interface DeserializeStack {
  add(
    middleware: ReturnType<typeof serverDateMiddleware>,
    options: typeof SERVER_DATE_MIDDLEWARE_OPTIONS,
  ): void;
}

/**
 * The object store on an S3 bucket, with conditional writes (`If-None-Match: *`, `If-Match`).
 * Every response's `Date` header (errors included) is kept as the server's time.
 */
export class S3ObjectStore implements ObjectStore {
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly serverDate: ReturnType<typeof serverDateMiddleware>;
  private serverTime: ServerTimeSample | undefined;

  constructor(options: S3ObjectStoreOptions) {
    this.client = options.client;
    this.bucket = options.bucket;
    this.serverDate = serverDateMiddleware(options.now ?? Date.now, (sample) => {
      this.serverTime = sample;
    });
  }

  /** The `Date` of the latest S3 response with this store's clock beside it. */
  lastServerTime(): ServerTimeSample | undefined {
    return this.serverTime;
  }

  async get(key: string, options: GetOptions = {}): Promise<StoredObject> {
    assertValidKey(key);
    const doing = `reading ${this.describe(key)}`;
    let response: GetObjectCommandOutput;
    try {
      response = await this.client.send(
        this.timed(new GetObjectCommand({ Bucket: this.bucket, Key: key })),
        sendOptions(options),
      );
    } catch (err) {
      throw abortReason(options) ?? translateS3Error(err, doing);
    }
    return this.readResponse(response, options.maxBytes ?? DEFAULT_MAX_READ_BYTES, doing, options);
  }

  async getIfChanged(
    key: string,
    etag: string,
    options: GetOptions = {},
  ): Promise<ConditionalGetResult> {
    assertValidKey(key);
    const doing = `reading ${this.describe(key)} if changed`;
    let response: GetObjectCommandOutput;
    try {
      response = await this.client.send(
        this.timed(new GetObjectCommand({ Bucket: this.bucket, Key: key, IfNoneMatch: etag })),
        sendOptions(options),
      );
    } catch (err) {
      if (sdkErrorDetails(err).status === 304) {
        return { status: 'unchanged', etag };
      }
      throw abortReason(options) ?? translateS3Error(err, doing);
    }
    const object = await this.readResponse(
      response,
      options.maxBytes ?? DEFAULT_MAX_READ_BYTES,
      doing,
      options,
    );
    return { status: 'changed', ...object };
  }

  async putIfAbsent(key: string, body: Buffer | string): Promise<string> {
    assertValidKey(key);
    return this.putObject(
      key,
      body,
      { IfNoneMatch: '*' },
      `creating ${this.describe(key)}`,
      'OBJECT_NOT_FOUND',
    );
  }

  async putIfMatch(key: string, body: Buffer | string, etag: string): Promise<string> {
    assertValidKey(key);
    // S3 answers If-Match on a missing key with 404 NoSuchKey: for this write that is a failed condition.
    const doing = `replacing ${this.describe(key)} if its ETag is ${etag}`;
    return this.putObject(key, body, { IfMatch: etag }, doing, 'PRECONDITION_FAILED');
  }

  async put(key: string, body: Buffer | string): Promise<string> {
    assertValidKey(key);
    return this.putObject(key, body, {}, `writing ${this.describe(key)}`, 'OBJECT_NOT_FOUND');
  }

  async head(key: string): Promise<ObjectHead> {
    assertValidKey(key);
    const doing = `reading metadata of ${this.describe(key)}`;
    try {
      const response = await this.client.send(
        this.timed(new HeadObjectCommand({ Bucket: this.bucket, Key: key })),
      );
      return {
        etag: required(response.ETag, 'ETag', doing),
        size: required(response.ContentLength, 'Content-Length', doing),
        lastModified: response.LastModified ?? new Date(0),
      };
    } catch (err) {
      throw translateS3Error(err, doing);
    }
  }

  async openRead(key: string, options: OpenReadOptions = {}): Promise<OpenReadResult> {
    assertValidKey(key);
    const doing = `opening ${this.describe(key)}`;
    const { range } = options;
    if (range !== undefined) {
      assertValidRange(range, doing);
      // S3 answers `bytes=-0` inconsistently; no object has a satisfiable empty suffix.
      if ('suffix' in range && range.suffix === 0) {
        return { kind: 'unsatisfiable', size: (await this.head(key)).size };
      }
    }
    let response: GetObjectCommandOutput;
    try {
      response = await this.client.send(
        this.timed(
          new GetObjectCommand({
            Bucket: this.bucket,
            Key: key,
            ...(range === undefined ? {} : { Range: formatRange(range) }),
          }),
        ),
      );
    } catch (err) {
      const { name, status } = sdkErrorDetails(err);
      if (range !== undefined && (name === 'InvalidRange' || status === 416)) {
        return { kind: 'unsatisfiable', size: (await this.head(key)).size };
      }
      throw translateS3Error(err, doing);
    }
    const stream = response.Body;
    if (!(stream instanceof Readable)) {
      throw new PodminError('BUCKET_UNAVAILABLE', `${doing}: the response has no streaming body`);
    }
    const etag = required(response.ETag, 'ETag', doing);
    const served = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(response.ContentRange ?? '');
    const body = translatedBody(readableBody(stream), `reading ${this.describe(key)}`);
    if (served !== null) {
      const [, start = '0', end = '0', size = '0'] = served;
      return {
        kind: 'opened',
        body,
        etag,
        start: Number(start),
        end: Number(end),
        size: Number(size),
      };
    }
    const size = required(response.ContentLength, 'Content-Length', doing);
    if (range !== undefined && resolveRange(range, size) === undefined) {
      // An empty object answered a range with 200: for every reader that range is unsatisfiable.
      await body.close();
      return { kind: 'unsatisfiable', size };
    }
    return { kind: 'opened', body, etag, start: 0, end: size - 1, size };
  }

  async delete(key: string): Promise<void> {
    assertValidKey(key);
    try {
      await this.client.send(
        this.timed(new DeleteObjectCommand({ Bucket: this.bucket, Key: key })),
      );
    } catch (err) {
      const translated = translateS3Error(err, `deleting ${this.describe(key)}`);
      if (translated.code !== 'OBJECT_NOT_FOUND') {
        throw translated;
      }
    }
  }

  async list(prefix: string, token?: string): Promise<ListPage> {
    const doing = `listing ${JSON.stringify(prefix)} in ${this.describeBucket()}`;
    try {
      const response = await this.client.send(
        this.timed(
          new ListObjectsV2Command({
            Bucket: this.bucket,
            Prefix: prefix === '' ? undefined : prefix,
            ContinuationToken: token,
            MaxKeys: PAGE_SIZE,
          }),
        ),
      );
      const objects: ListedObject[] = (response.Contents ?? []).map((entry) => ({
        key: required(entry.Key, 'Key', doing),
        size: entry.Size ?? 0,
        etag: entry.ETag ?? '',
        lastModified: entry.LastModified ?? new Date(0),
      }));
      const nextToken = response.IsTruncated === true ? response.NextContinuationToken : undefined;
      return nextToken === undefined ? { objects } : { objects, nextToken };
    } catch (err) {
      throw translateS3Error(err, doing);
    }
  }

  private async putObject(
    key: string,
    body: Buffer | string,
    condition: { IfNoneMatch?: string; IfMatch?: string },
    doing: string,
    missingKey: 'OBJECT_NOT_FOUND' | 'PRECONDITION_FAILED',
  ): Promise<string> {
    const content = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    try {
      const response = await this.client.send(
        this.timed(
          new PutObjectCommand({
            Bucket: this.bucket,
            Key: key,
            Body: content,
            ContentLength: content.length,
            ...condition,
          }),
        ),
      );
      return required(response.ETag, 'ETag', doing);
    } catch (err) {
      throw translateS3Error(err, doing, missingKey);
    }
  }

  /** Reads a GetObject body, refusing more than `maxBytes` by Content-Length and while streaming. */
  private async readResponse(
    response: GetObjectCommandOutput,
    maxBytes: number,
    doing: string,
    options: GetOptions,
  ): Promise<StoredObject> {
    const stream = response.Body as
      (AsyncIterable<Uint8Array> & { destroy?: () => void }) | undefined;
    const etag = required(response.ETag, 'ETag', doing);
    if (response.ContentLength !== undefined && response.ContentLength > maxBytes) {
      stream?.destroy?.();
      throw new ObjectTooLargeError(doing, maxBytes, response.ContentLength);
    }
    if (stream === undefined) {
      return { body: Buffer.alloc(0), etag };
    }
    const chunks: Buffer[] = [];
    let total = 0;
    try {
      for await (const chunk of stream) {
        total += chunk.length;
        if (total > maxBytes) {
          stream.destroy?.();
          throw new ObjectTooLargeError(doing, maxBytes);
        }
        chunks.push(Buffer.from(chunk));
      }
    } catch (err) {
      throw abortReason(options) ?? translateS3Error(err, doing);
    }
    return { body: Buffer.concat(chunks, total), etag };
  }

  /** Adds the server-date observer to one command (per command: clients may be shared). */
  private timed<C extends { middlewareStack: DeserializeStack }>(command: C): C {
    command.middlewareStack.add(this.serverDate, SERVER_DATE_MIDDLEWARE_OPTIONS);
    return command;
  }

  private describe(key: string): string {
    return describeObject(key, this.describeBucket());
  }

  private describeBucket(): string {
    return `bucket s3://${this.bucket}`;
  }
}

/** Passes reads through, translating stream failures (a reset connection) into PodminErrors. */
function translatedBody(body: ObjectBody, doing: string): ObjectBody {
  return {
    read: (into) =>
      body.read(into).catch((err: unknown) => {
        throw translateS3Error(err, doing);
      }),
    close: () => body.close(),
  };
}

/** The SDK's per-request options: the read's abort signal, when it has one. */
function sendOptions(options: GetOptions): { abortSignal?: AbortSignal } {
  return options.signal === undefined ? {} : { abortSignal: options.signal };
}

// A cancelled read rejects with the caller's reason, not the SDK's AbortError mapped to an outage.
function abortReason(options: GetOptions): Error | undefined {
  return options.signal?.aborted === true ? (options.signal.reason as Error) : undefined;
}

function required<T>(value: T | undefined, field: string, doing: string): T {
  if (value === undefined) {
    throw new PodminError('BUCKET_UNAVAILABLE', `${doing}: the response has no ${field}`);
  }
  return value;
}
