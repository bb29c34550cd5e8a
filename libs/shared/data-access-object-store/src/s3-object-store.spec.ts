import { Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  NoSuchKey,
  PutObjectCommand,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import type { S3Client, GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { S3ObjectStore } from './s3-object-store';

/** A stand-in S3 client whose `send` answers from a queue; allowed only in this adapter's spec. */
function fakeClient(): { client: S3Client; send: jest.Mock } {
  const send = jest.fn();
  return { client: { send } as unknown as S3Client, send };
}

function s3Error(name: string, status: number): S3ServiceException {
  return new S3ServiceException({ name, $fault: 'client', $metadata: { httpStatusCode: status } });
}

function body(...chunks: string[]): Readable {
  return Readable.from(chunks.map((c) => Buffer.from(c)));
}

describe('S3ObjectStore (fake client)', () => {
  it('observes the server date on every command it sends, and has none before a response', async () => {
    const { client, send } = fakeClient();
    send.mockResolvedValue({ ETag: '"e"', ContentLength: 0, Body: body(), Contents: [] });
    const store = new S3ObjectStore({ client, bucket: 'b' });
    await store.put('k', 'v');
    await store.get('k');
    await store.head('k');
    await store.list('');
    await store.delete('k');
    const commands = send.mock.calls.map((call: unknown[]) => call[0] as PutObjectCommand);
    expect(commands).toHaveLength(5);
    for (const command of commands)
      expect(command.middlewareStack.identify()).toContainEqual(
        expect.stringMatching(/^podminServerDate - deserialize/),
      );
    // The fake client runs no middleware: no response was seen.
    expect(store.lastServerTime()).toBeUndefined();
  });

  it('sends create-only and if-match conditions with the body', async () => {
    const { client, send } = fakeClient();
    send.mockResolvedValue({ ETag: '"e"' });
    const store = new S3ObjectStore({ client, bucket: 'b' });
    await expect(store.putIfAbsent('k', 'v')).resolves.toBe('"e"');
    await expect(store.putIfMatch('k', Buffer.from('w'), '"old"')).resolves.toBe('"e"');
    const [create, replace] = send.mock.calls.map((call: unknown[]) => call[0] as PutObjectCommand);
    expect(create).toBeInstanceOf(PutObjectCommand);
    expect(create?.input).toMatchObject({
      Bucket: 'b',
      Key: 'k',
      IfNoneMatch: '*',
      ContentLength: 1,
    });
    expect(replace?.input).toMatchObject({ Bucket: 'b', Key: 'k', IfMatch: '"old"' });
    expect(replace?.input.IfNoneMatch).toBeUndefined();
  });

  it('maps 412 and, for if-match writes only, NoSuchKey to PRECONDITION_FAILED', async () => {
    const { client, send } = fakeClient();
    const store = new S3ObjectStore({ client, bucket: 'b' });
    send.mockRejectedValueOnce(s3Error('PreconditionFailed', 412));
    await expect(store.putIfAbsent('k', 'v')).rejects.toMatchObject({
      code: 'PRECONDITION_FAILED',
    });
    send.mockRejectedValueOnce(
      new NoSuchKey({ message: 'gone', $metadata: { httpStatusCode: 404 } }),
    );
    await expect(store.putIfMatch('k', 'v', '"e"')).rejects.toMatchObject({
      code: 'PRECONDITION_FAILED',
    });
    send.mockRejectedValueOnce(s3Error('ConditionalRequestConflict', 409));
    await expect(store.putIfMatch('k', 'v', '"e"')).rejects.toMatchObject({
      code: 'CONFLICT',
    });
    send.mockRejectedValueOnce(s3Error('ConditionalRequestConflict', 409));
    await expect(store.putIfAbsent('k', 'v')).rejects.toMatchObject({ code: 'CONFLICT' });
    send.mockRejectedValueOnce(
      new NoSuchKey({ message: 'gone', $metadata: { httpStatusCode: 404 } }),
    );
    await expect(store.get('k')).rejects.toMatchObject({ code: 'OBJECT_NOT_FOUND' });
  });

  it('hands the read signal to the SDK and rejects with its reason once aborted', async () => {
    const { client, send } = fakeClient();
    const store = new S3ObjectStore({ client, bucket: 'b' });
    const controller = new AbortController();
    send.mockResolvedValueOnce({ ETag: '"e"', ContentLength: 1, Body: body('v') });
    await expect(store.get('k', { signal: controller.signal })).resolves.toMatchObject({
      etag: '"e"',
    });
    expect(send.mock.calls[0]?.[1]).toEqual({ abortSignal: controller.signal });
    const reason = new Error('pass deadline exceeded');
    controller.abort(reason);
    const sdkAbort = Object.assign(new Error('Request aborted'), { name: 'AbortError' });
    send.mockRejectedValueOnce(sdkAbort);
    await expect(store.get('k', { signal: controller.signal })).rejects.toBe(reason);
    send.mockRejectedValueOnce(sdkAbort);
    await expect(store.getIfChanged('k', '"e"', { signal: controller.signal })).rejects.toBe(
      reason,
    );
    expect(send.mock.calls[2]?.[1]).toEqual({ abortSignal: controller.signal });
    // Without a signal nothing changes: no per-request options, outages still mapped.
    send.mockRejectedValueOnce(sdkAbort);
    await expect(store.get('k')).rejects.toMatchObject({ code: 'BUCKET_UNAVAILABLE' });
    expect(send.mock.calls[3]?.[1]).toEqual({});
  });

  it('treats 304 from a conditional GET as unchanged', async () => {
    const { client, send } = fakeClient();
    send.mockRejectedValueOnce(s3Error('Unknown', 304));
    const store = new S3ObjectStore({ client, bucket: 'b' });
    await expect(store.getIfChanged('k', '"e"')).resolves.toEqual({
      status: 'unchanged',
      etag: '"e"',
    });
    expect((send.mock.calls[0]?.[0] as GetObjectCommand).input).toMatchObject({
      Key: 'k',
      IfNoneMatch: '"e"',
    });
  });

  it('refuses a body over maxBytes by Content-Length without reading it', async () => {
    const { client, send } = fakeClient();
    const stream = body('0123456789');
    const destroy = jest.spyOn(stream, 'destroy');
    send.mockResolvedValueOnce({ ETag: '"e"', ContentLength: 10, Body: stream });
    const store = new S3ObjectStore({ client, bucket: 'b' });
    await expect(store.get('k', { maxBytes: 9 })).rejects.toMatchObject({
      code: 'OBJECT_TOO_LARGE',
    });
    expect(destroy).toHaveBeenCalled();
  });

  it('caps the streamed read when Content-Length is missing or wrong', async () => {
    const { client, send } = fakeClient();
    send.mockResolvedValueOnce({ ETag: '"e"', Body: body('01234', '56789') });
    const store = new S3ObjectStore({ client, bucket: 'b' });
    await expect(store.get('k', { maxBytes: 7 })).rejects.toMatchObject({
      code: 'OBJECT_TOO_LARGE',
    });
    send.mockResolvedValueOnce({ ETag: '"e"', ContentLength: 10, Body: body('01234', '56789') });
    await expect(store.get('k', { maxBytes: 10 })).resolves.toEqual({
      body: Buffer.from('0123456789'),
      etag: '"e"',
    });
  });

  it('treats deleting a missing key as success but reports other failures', async () => {
    const { client, send } = fakeClient();
    const store = new S3ObjectStore({ client, bucket: 'b' });
    send.mockRejectedValueOnce(
      new NoSuchKey({ message: 'gone', $metadata: { httpStatusCode: 404 } }),
    );
    await expect(store.delete('k')).resolves.toBeUndefined();
    send.mockRejectedValueOnce(s3Error('AccessDenied', 403));
    await expect(store.delete('k')).rejects.toMatchObject({ code: 'ACCESS_DENIED' });
    expect(send.mock.calls[0]?.[0]).toBeInstanceOf(DeleteObjectCommand);
  });

  it('pages listings with the continuation token', async () => {
    const { client, send } = fakeClient();
    const when = new Date('2024-01-02T03:04:05Z');
    send.mockResolvedValueOnce({
      IsTruncated: true,
      NextContinuationToken: 'next',
      Contents: [{ Key: 'p/a', Size: 1, ETag: '"x"', LastModified: when }],
    });
    send.mockResolvedValueOnce({ IsTruncated: false, Contents: [] });
    const store = new S3ObjectStore({ client, bucket: 'b' });
    await expect(store.list('p/')).resolves.toEqual({
      objects: [{ key: 'p/a', size: 1, etag: '"x"', lastModified: when }],
      nextToken: 'next',
    });
    await expect(store.list('p/', 'next')).resolves.toEqual({ objects: [] });
    const second = send.mock.calls[1]?.[0] as ListObjectsV2Command;
    expect(second.input).toMatchObject({
      Bucket: 'b',
      Prefix: 'p/',
      ContinuationToken: 'next',
      MaxKeys: 1000,
    });
  });

  it('validates keys before calling S3', async () => {
    const { client, send } = fakeClient();
    const store = new S3ObjectStore({ client, bucket: 'b' });
    await expect(store.get('../etc/passwd')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect(send).not.toHaveBeenCalled();
  });
});
