import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { sha256Digest } from '@podmin/util-oci';
import { RecordingSink } from './__fixtures__/recording-sink';
import {
  BlobSender,
  ClientGoneError,
  ClientStalledError,
  DigestMismatchError,
  HangupWatch,
} from './blob-sender';
import { TransferBudget } from './transfer-budget';
import { HashingThread } from './hashing-thread';
import { readableBody } from '@podmin/data-access-object-store';
import type { ObjectBody } from '@podmin/data-access-object-store';

const MiB = 1024 * 1024;

/** A body over `bytes` in 64 KiB chunks that records whether it was closed. */
function bodyOf(bytes: Buffer): ObjectBody & { closed: boolean } {
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += 64 * 1024) chunks.push(bytes.subarray(i, i + 64 * 1024));
  const inner = readableBody(Readable.from(chunks));
  const body = {
    closed: false,
    read: (into: Uint8Array) => inner.read(into),
    close: async () => {
      body.closed = true;
      await inner.close();
    },
  };
  return body;
}

describe('BlobSender', () => {
  const hashing = new HashingThread();
  const sender = new BlobSender(hashing);
  afterAll(() => hashing.onApplicationShutdown());

  it('sends content that matches its digest whole, through more buffers than it keeps', async () => {
    const content = randomBytes(9 * MiB + 123);
    const sink = new RecordingSink();
    const body = bodyOf(content);
    await sender.send(body, sink, sha256Digest(content));
    expect(sink.received.equals(content)).toBe(true);
    expect(sink.ended).toBe(true);
    expect(body.closed).toBe(true);
  });

  it('withholds the last buffer and fails when the content does not match its digest', async () => {
    const content = randomBytes(3 * MiB + 5);
    const expected = sha256Digest(content);
    content.writeUInt8(content.readUInt8(content.length - 1) ^ 0xff, content.length - 1);
    const sink = new RecordingSink();
    const body = bodyOf(content);
    await expect(sender.send(body, sink, expected)).rejects.toBeInstanceOf(DigestMismatchError);
    expect(sink.received.equals(content.subarray(0, 3 * MiB))).toBe(true);
    expect(sink.ended).toBe(false);
    expect(body.closed).toBe(true);
  });

  it('fails a one-buffer blob that does not match without sending any of it', async () => {
    const sink = new RecordingSink();
    await expect(
      sender.send(bodyOf(Buffer.from('tampered')), sink, sha256Digest('original')),
    ).rejects.toBeInstanceOf(DigestMismatchError);
    expect(sink.chunks).toHaveLength(0);
  });

  it('sends an empty blob and a part without a digest', async () => {
    const empty = new RecordingSink();
    await sender.send(bodyOf(Buffer.alloc(0)), empty, sha256Digest(''));
    expect(empty.ended).toBe(true);
    const part = new RecordingSink();
    await sender.send(bodyOf(Buffer.from('any bytes')), part, undefined);
    expect(part.received.toString()).toBe('any bytes');
  });

  it('stops reading and closes the body when the client hangs up', async () => {
    const content = randomBytes(8 * MiB);
    const sink = new RecordingSink();
    const body = bodyOf(content);
    const sending = sender.send(body, sink, sha256Digest(content));
    setImmediate(() => sink.hangUp());
    await expect(sending).rejects.toThrow('the client closed the connection');
    expect(body.closed).toBe(true);
    expect(sink.received.length).toBeLessThan(content.length);
  });

  it('gives up on a client that stops reading and releases its transfer', async () => {
    const budget = new TransferBudget({ largeSets: 1, maxTransfers: 1, stallMs: 50 });
    const stalling = new BlobSender(hashing, budget);
    const content = randomBytes(8 * MiB);
    const sink = new RecordingSink();
    sink.stalled = true;
    const body = bodyOf(content);
    await expect(stalling.send(body, sink, sha256Digest(content))).rejects.toBeInstanceOf(
      ClientStalledError,
    );
    expect(body.closed).toBe(true);
    expect(budget.inFlight).toBe(0);
    expect(sink.received.length).toBeLessThan(content.length);
  });

  it('keeps nothing of a wait once it settles, and fails the waits pending at a hang-up', async () => {
    const sink = new RecordingSink();
    const watch = new HangupWatch(sink);
    for (let i = 0; i < 1_000; i++) await watch.unlessGone(Promise.resolve(i));
    await expect(watch.unlessGone(Promise.reject(new Error('read failed')))).rejects.toThrow(
      'read failed',
    );
    expect(watch.waiting).toBe(0);
    const pending = watch.unlessGone(new Promise<void>(() => undefined));
    expect(watch.waiting).toBe(1);
    sink.hangUp();
    await expect(pending).rejects.toBeInstanceOf(ClientGoneError);
    expect(watch.waiting).toBe(0);
    await expect(watch.unlessGone(Promise.resolve(1))).rejects.toBeInstanceOf(ClientGoneError);
  });
});
