import { rm } from 'node:fs/promises';
import path from 'node:path';
import {
  Server,
  ServerCredentials,
  loadPackageDefinition,
  status,
  type ServerUnaryCall,
  type ServerWritableStream,
  type sendUnaryData,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { PROTO_FILES, loadAgentProto, protoRoot } from '@podmin/agent-contracts';

/** What a test says about one Pod the stand-in kubelet runs. */
export interface FakePod {
  readonly uid: string;
  readonly name: string;
  readonly namespace?: string;
  readonly labels?: Record<string, string>;
  readonly ready: boolean;
  /** podIPs in order (IPv4 and IPv6 text as kubelet would send it). */
  readonly ips?: readonly string[];
}

let podType: protobuf.Type | undefined;

/** The protobuf bytes of a v1.Pod as kubelet's Pods API sends them. */
export function encodeFakePod(pod: FakePod): Buffer {
  podType ??= protobuf
    .loadSync(path.join(protoRoot(), PROTO_FILES.corev1Pod))
    .lookupType('k8s.io.api.core.v1.Pod');
  const ips = pod.ips ?? [];
  return Buffer.from(
    podType
      .encode(
        podType.fromObject({
          metadata: {
            name: pod.name,
            namespace: pod.namespace ?? 'default',
            uid: pod.uid,
            labels: pod.labels ?? {},
          },
          status: {
            phase: 'Running',
            conditions: [{ type: 'Ready', status: pod.ready ? 'True' : 'False' }],
            ...(ips.length > 0 ? { podIP: ips[0], podIPs: ips.map((ip) => ({ ip })) } : {}),
          },
        }),
      )
      .finish(),
  );
}

/**
 * A stand-in kubelet serving the Pods API (ListPods, WatchPods) on a real gRPC Unix socket.
 * Changes are sent to open watches unless the test asks for a silent change (a missed event).
 */
export class FakeKubelet {
  private server: Server | undefined;
  private readonly pods = new Map<string, Buffer>();
  private watchers: ServerWritableStream<unknown, unknown>[] = [];
  /** Watch streams opened so far (each connection counts once). */
  watchCalls = 0;
  /** ListPods calls received so far. */
  listCalls = 0;
  /** ListPods answers wait for this (a test holds it to race a list against events). */
  listGate: Promise<void> = Promise.resolve();
  /** While true, ListPods fails with UNAVAILABLE. */
  failLists = false;

  constructor(readonly socket: string) {}

  /** Binds the socket (again after `stop`). */
  async start(): Promise<void> {
    const pkg = loadPackageDefinition(loadAgentProto(PROTO_FILES.kubeletPods)) as unknown as {
      v1alpha1: { Pods: { service: Parameters<Server['addService']>[0] } };
    };
    const server = new Server();
    const impl: UntypedServiceImplementation = {
      ListPods: (_call: ServerUnaryCall<unknown, unknown>, cb: sendUnaryData<unknown>) => {
        this.listCalls++;
        // The answer is taken now and sent once the gate opens, as a slow kubelet would.
        const pods = [...this.pods.values()];
        const gate = this.listGate;
        const fail = this.failLists;
        void gate.then(() =>
          fail ? cb({ code: status.UNAVAILABLE, details: 'kubelet is busy' }) : cb(null, { pods }),
        );
      },
      WatchPods: (call: ServerWritableStream<unknown, unknown>) => {
        this.watchCalls++;
        for (const pod of this.pods.values()) call.write({ type: 'ADDED', pod });
        call.write({ type: 'INITIAL_SYNC_COMPLETE' });
        this.watchers.push(call);
        call.on('cancelled', () => this.forget(call));
      },
    };
    server.addService(pkg.v1alpha1.Pods.service, impl);
    await new Promise<void>((resolve, reject) =>
      server.bindAsync(`unix://${this.socket}`, ServerCredentials.createInsecure(), (err) =>
        err ? reject(err) : resolve(),
      ),
    );
    this.server = server;
  }

  /** Stops serving and removes the socket, as a stopped kubelet does. */
  async stop(): Promise<void> {
    this.server?.forceShutdown();
    this.server = undefined;
    this.watchers = [];
    await rm(this.socket, { force: true });
  }

  /** Open watch streams. */
  watching(): number {
    return this.watchers.length;
  }

  /** Adds or replaces a Pod; sends ADDED/MODIFIED unless `silent`. */
  set(pod: FakePod, options: { silent?: boolean } = {}): void {
    const type = this.pods.has(pod.uid) ? 'MODIFIED' : 'ADDED';
    const bytes = encodeFakePod(pod);
    this.pods.set(pod.uid, bytes);
    if (!options.silent) this.send(type, bytes);
  }

  /** Removes a Pod; sends DELETED (with its last state) unless `silent`. */
  delete(uid: string, options: { silent?: boolean } = {}): void {
    const bytes = this.pods.get(uid);
    this.pods.delete(uid);
    if (bytes && !options.silent) this.send('DELETED', bytes);
  }

  /** Ends every open watch stream normally (kubelet closing it). */
  endWatches(): void {
    for (const w of this.watchers) w.end();
    this.watchers = [];
  }

  private send(type: string, pod: Buffer): void {
    for (const w of this.watchers) w.write({ type, pod });
  }

  private forget(call: ServerWritableStream<unknown, unknown>): void {
    this.watchers = this.watchers.filter((w) => w !== call);
  }
}
