import { createHash } from 'node:crypto';
import type { StoredObject } from '@podmin/data-access-object-store';
import { PodminError } from '@podmin/util-errors';
import type { PodminErrorCode } from '@podmin/util-errors';
import type { LeaseStore } from '../election/election.ports';

/** One request the bucket saw. */
export interface BucketOp {
  client: string;
  op: 'get' | 'putIfAbsent' | 'putIfMatch';
  atMs: number;
  /** What the caller got: `ok`, or the error code. */
  result: 'ok' | PodminErrorCode;
}

/** A client's view of the bucket with failure injection. */
export interface FakeLeaseClient extends LeaseStore {
  /** Every request fails with BUCKET_UNAVAILABLE while true (the bucket is lost to this node). */
  unavailable: boolean;
  /** The next N conditional writes answer CONFLICT (S3 409) without applying. */
  conflictsNext: number;
  /** The next N conditional writes apply, then answer this error (as a retried request or a lost answer would). */
  applyThenFail: { count: number; code: PodminErrorCode };
}

/** A hand-written fake bucket holding one key set, shared by several elector clients; ETags are MD5s like S3's. */
export class FakeLeaseBucket {
  readonly objects = new Map<string, StoredObject>();
  readonly ops: BucketOp[] = [];

  constructor(private readonly now: () => number) {}

  /** Stores `body` directly (a writer outside the test's electors). */
  store(key: string, body: string): string {
    const etag = `"${createHash('md5').update(body).digest('hex')}"`;
    this.objects.set(key, { body: Buffer.from(body), etag });
    return etag;
  }

  /** The stored body of `key`, as text. */
  text(key: string): string | undefined {
    return this.objects.get(key)?.body.toString('utf8');
  }

  /** Writes by `client` with the given result. */
  writes(client?: string, result?: BucketOp['result']): BucketOp[] {
    return this.ops.filter(
      (o) =>
        o.op !== 'get' &&
        (client === undefined || o.client === client) &&
        (result === undefined || o.result === result),
    );
  }

  /** A client named `name`. */
  client(name: string): FakeLeaseClient {
    const record = (op: BucketOp['op'], result: BucketOp['result']): void => {
      this.ops.push({ client: name, op, atMs: this.now(), result });
    };
    const fail = (op: BucketOp['op'], code: PodminErrorCode, key: string): Promise<never> => {
      record(op, code);
      return Promise.reject(new PodminError(code, `${op} ${key}: injected ${code}`));
    };
    const conditional = (
      op: 'putIfAbsent' | 'putIfMatch',
      key: string,
      body: Buffer | string,
      matches: boolean,
    ): Promise<string> => {
      if (client.unavailable) return fail(op, 'BUCKET_UNAVAILABLE', key);
      if (client.conflictsNext > 0) {
        client.conflictsNext--;
        return fail(op, 'CONFLICT', key);
      }
      if (!matches) return fail(op, 'PRECONDITION_FAILED', key);
      const etag = this.store(key, body.toString());
      if (client.applyThenFail.count > 0) {
        client.applyThenFail.count--;
        return fail(op, client.applyThenFail.code, key);
      }
      record(op, 'ok');
      return Promise.resolve(etag);
    };
    const client: FakeLeaseClient = {
      unavailable: false,
      conflictsNext: 0,
      applyThenFail: { count: 0, code: 'PRECONDITION_FAILED' },
      get: (key: string): Promise<StoredObject> => {
        if (client.unavailable) return fail('get', 'BUCKET_UNAVAILABLE', key);
        const object = this.objects.get(key);
        if (object === undefined) return fail('get', 'OBJECT_NOT_FOUND', key);
        record('get', 'ok');
        return Promise.resolve({ body: Buffer.from(object.body), etag: object.etag });
      },
      putIfAbsent: (key: string, body: Buffer | string): Promise<string> =>
        conditional('putIfAbsent', key, body, !this.objects.has(key)),
      putIfMatch: (key: string, body: Buffer | string, etag: string): Promise<string> =>
        conditional('putIfMatch', key, body, this.objects.get(key)?.etag === etag),
    };
    return client;
  }
}
