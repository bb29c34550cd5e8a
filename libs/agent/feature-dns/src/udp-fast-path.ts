import fs from 'node:fs';
import path from 'node:path';
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import type { ZoneView } from './dns-zone-types';
import {
  CONTROL_STOP,
  CONTROL_WORDS,
  CONTROL_ZONE_VERSION,
  COUNTER,
  COUNTER_NAMES,
  type CounterName,
  type UdpWorkerData,
  type UdpWorkerMessage,
} from './udp-protocol';

/** The worker's bundle name; the agent-dns build writes it beside agent-dns.cjs. */
export const UDP_WORKER_BUNDLE = 'agent-dns-udp.cjs';

/** Where the worker bundle is looked for by default: beside the running bundle. */
export function defaultUdpWorkerFile(): string {
  return path.join(__dirname, UDP_WORKER_BUNDLE);
}

/** The fast path could not start here (no worker bundle, no koffi, no libc): use dgram. */
export class UdpFastPathUnavailable extends Error {}

/** A bind failure of the worker's socket, with the errno's name as `code` (as dgram's). */
export class UdpBindError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** How the fast path is started. */
export interface UdpFastPathOptions {
  workerFile: string;
  host: string;
  port: number;
  bufferBytes: number;
  zone: ZoneView;
  /** Datagrams per recvmmsg/sendmmsg. Default 64. */
  batch?: number;
  /** How often the blocked worker looks at its stop word. Default 100 ms. */
  pollMs?: number;
  /** Called when the worker ends without being closed (it has closed its socket). */
  onExit?: (reason: string) => void;
}

/**
 * The UDP listener as a worker thread (udp-worker.ts) reading one libc socket with recvmmsg
 * and answering from its own copy of the zone; this side posts zones and reads its counters
 * from shared memory.
 */
export class UdpFastPath {
  /** Starts the worker and resolves once its socket is bound. */
  static start(options: UdpFastPathOptions): Promise<UdpFastPath> {
    if (!fs.existsSync(options.workerFile)) {
      return Promise.reject(
        new UdpFastPathUnavailable(`no UDP worker bundle at ${options.workerFile}`),
      );
    }
    const control = new SharedArrayBuffer(CONTROL_WORDS * 4);
    const counters = new SharedArrayBuffer(COUNTER_NAMES.length * 8);
    const { port1, port2 } = new MessageChannel();
    const data: UdpWorkerData = {
      podminDnsUdpWorker: true,
      host: options.host,
      port: options.port,
      bufferBytes: options.bufferBytes,
      batch: options.batch ?? 64,
      pollMs: options.pollMs ?? 100,
      control,
      counters,
      zones: port2,
      zone: options.zone,
    };
    // The worker's heap holds one zone and its memo; the process's V8 flags apply to it too.
    const worker = new Worker(options.workerFile, {
      workerData: data,
      transferList: [port2],
      stdout: false,
      stderr: false,
      resourceLimits: { maxOldGenerationSizeMb: 64, stackSizeMb: 1 },
    });
    return new Promise((resolve, reject) => {
      let started: UdpFastPath | undefined;
      worker.on('message', (message: UdpWorkerMessage) => {
        if (started !== undefined) return;
        if (message.type === 'listening') {
          started = new UdpFastPath(worker, control, counters, port1, message.port, options.onExit);
          resolve(started);
        } else if (message.type === 'unavailable') {
          reject(new UdpFastPathUnavailable(message.reason));
        } else {
          reject(new UdpBindError(message.code, message.message));
        }
      });
      worker.on('error', (err) => {
        if (started === undefined) reject(new UdpFastPathUnavailable(err.message));
        else started.exited(`the UDP worker failed: ${err.message}`);
      });
      worker.on('exit', (code) => {
        if (started === undefined) {
          reject(new UdpFastPathUnavailable(`the UDP worker exited with ${code} before binding`));
        } else started.exited(`the UDP worker exited with ${code}`);
      });
    });
  }

  private readonly control: Int32Array;
  private readonly counts: Float64Array;
  private closing: Promise<void> | undefined;
  private ended = false;

  private constructor(
    private readonly worker: Worker,
    control: SharedArrayBuffer,
    counters: SharedArrayBuffer,
    private readonly zones: MessagePort,
    /** The bound UDP port. */
    readonly port: number,
    private readonly onExit: ((reason: string) => void) | undefined,
  ) {
    this.control = new Int32Array(control);
    this.counts = new Float64Array(counters);
  }

  /** Answers from `zone` from the worker's next batch on. */
  setZone(zone: ZoneView): void {
    this.zones.postMessage(zone);
    Atomics.add(this.control, CONTROL_ZONE_VERSION, 1);
  }

  /** One counter of the worker. */
  counter(name: CounterName): number {
    return this.counts[COUNTER[name]] ?? 0;
  }

  /** Asks the worker to stop and waits until it has closed its socket and exited. */
  close(): Promise<void> {
    if (this.closing !== undefined) return this.closing;
    Atomics.store(this.control, CONTROL_STOP, 1);
    Atomics.notify(this.control, CONTROL_STOP);
    this.closing = this.ended
      ? Promise.resolve()
      : new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    this.zones.close();
    return this.closing;
  }

  private exited(reason: string): void {
    if (this.ended) return;
    this.ended = true;
    if (this.closing === undefined) this.onExit?.(reason);
  }
}
