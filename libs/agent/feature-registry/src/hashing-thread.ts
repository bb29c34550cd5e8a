import { Injectable } from '@nestjs/common';
import type { OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { Worker } from 'node:worker_threads';
import type { DigestAlgorithm } from '@podmin/util-oci';

// The thread's code as a string: the registry ships as one bundled file, so a separate worker
// module would need its own bundle entry and a path resolved at run time. Bytes are hashed in
// place in shared memory; nothing is copied.
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const hashes = new Map();
parentPort.on('message', (m) => {
  if (m.op === 'start') {
    hashes.set(m.job, createHash(m.algorithm));
  } else if (m.op === 'update') {
    hashes.get(m.job)?.update(new Uint8Array(m.memory, m.offset, m.length));
    parentPort.postMessage({ job: m.job, op: 'hashed' });
  } else if (m.op === 'digest') {
    const hash = hashes.get(m.job);
    hashes.delete(m.job);
    parentPort.postMessage({ job: m.job, op: 'digest', hex: hash ? hash.digest('hex') : '' });
  } else if (m.op === 'drop') {
    hashes.delete(m.job);
  }
});
`;

type FromThread = { job: number; op: 'hashed' } | { job: number; op: 'digest'; hex: string };

/** An incremental digest computed on the hashing thread. */
export interface ThreadDigester {
  /**
   * Queues `bytes`, which must lie in a SharedArrayBuffer and stay unchanged until the returned
   * promise resolves. It never rejects: a failed thread is reported by {@link digest}.
   */
  update(bytes: Uint8Array): Promise<void>;
  /** Resolves to `<algorithm>:<hex>` of everything queued; call once, after the last update. */
  digest(): Promise<string>;
  /** Forgets the hash (its transfer was abandoned). */
  abandon(): void;
}

/**
 * One worker thread that hashes the blobs being served, so that hashing overlaps with writing
 * to the socket instead of taking turns with it on the main thread. Started with the module
 * (its memory is part of the idle process, not of a pull), it holds the event loop open only
 * while a hash is in progress; a thread that dies fails its hashes and is replaced on next use.
 */
@Injectable()
export class HashingThread implements OnModuleInit, OnApplicationShutdown {
  private worker: Worker | undefined;
  private nextJob = 1;
  private readonly jobs = new Map<number, Job>();

  /** Starts the thread. */
  onModuleInit(): void {
    this.worker ??= this.spawn();
  }

  /** Starts an incremental hash with `algorithm`. */
  start(algorithm: DigestAlgorithm): ThreadDigester {
    const worker = (this.worker ??= this.spawn());
    const id = this.nextJob++;
    const job = new Job(id, algorithm, worker, () => this.forget(id));
    this.jobs.set(id, job);
    worker.ref();
    worker.postMessage({ op: 'start', job: id, algorithm });
    return job;
  }

  /** Stops the thread; hashes still in progress fail. */
  async onApplicationShutdown(): Promise<void> {
    const worker = this.worker;
    if (worker === undefined) return;
    this.stopped(worker, new Error('the hashing thread was stopped'));
    await worker.terminate();
  }

  private spawn(): Worker {
    const worker = new Worker(WORKER_SOURCE, { eval: true });
    worker.unref();
    worker.on('message', (message: FromThread) => this.jobs.get(message.job)?.receive(message));
    worker.on('error', (err) => this.stopped(worker, err));
    worker.on('exit', (code) =>
      this.stopped(worker, new Error(`the hashing thread exited with code ${code}`)),
    );
    return worker;
  }

  private forget(id: number): void {
    this.jobs.delete(id);
    if (this.jobs.size === 0) this.worker?.unref();
  }

  /** Fails every hash in progress on `worker`; the next start spawns a new thread. */
  private stopped(worker: Worker, err: Error): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    const jobs = [...this.jobs.values()];
    this.jobs.clear();
    for (const job of jobs) job.fail(err);
  }
}

class Job implements ThreadDigester {
  private readonly hashed: Array<() => void> = [];
  private result: { resolve: (digest: string) => void; reject: (err: Error) => void } | undefined;
  private failure: Error | undefined;
  private finished = false;

  constructor(
    private readonly id: number,
    private readonly algorithm: DigestAlgorithm,
    private readonly worker: Worker,
    private readonly done: () => void,
  ) {}

  update(bytes: Uint8Array): Promise<void> {
    if (this.failure !== undefined) return Promise.resolve();
    if (!(bytes.buffer instanceof SharedArrayBuffer)) {
      throw new TypeError('the hashing thread reads only bytes in a SharedArrayBuffer');
    }
    return new Promise((resolve) => {
      this.hashed.push(resolve);
      this.worker.postMessage({
        op: 'update',
        job: this.id,
        memory: bytes.buffer,
        offset: bytes.byteOffset,
        length: bytes.length,
      });
    });
  }

  digest(): Promise<string> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.result = { resolve, reject };
      this.worker.postMessage({ op: 'digest', job: this.id });
    });
  }

  abandon(): void {
    if (this.finished) return;
    this.fail(new Error('the hash was abandoned'));
    this.worker.postMessage({ op: 'drop', job: this.id });
  }

  receive(message: FromThread): void {
    if (message.op === 'hashed') {
      this.hashed.shift()?.();
      return;
    }
    this.finished = true;
    this.done();
    this.result?.resolve(`${this.algorithm}:${message.hex}`);
  }

  fail(err: Error): void {
    this.failure ??= err;
    this.finished = true;
    this.done();
    for (const resolve of this.hashed.splice(0)) resolve();
    this.result?.reject(err);
    this.result = undefined;
  }
}
