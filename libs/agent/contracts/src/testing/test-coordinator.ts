import * as grpc from '@grpc/grpc-js';
import {
  AGENT_SERVICES,
  agentProtoService,
  snapshot as snapshotTypes,
  type coordinator,
} from '../index';

type Watch = grpc.ServerUnaryCall<coordinator.WatchServicesRequest, unknown>;
type Reply = grpc.sendUnaryData<unknown>;

/**
 * A real Coordinator gRPC server on a Unix socket serving a view the test sets: WatchServices
 * is the contract's long poll (at once when the caller's revision differs, else on the next
 * `setView` or after `wait_ms`). GetLeadership says "not leader".
 */
export class TestCoordinator {
  /** WatchServices calls received. */
  calls = 0;
  private view: { snapshot?: snapshotTypes.ServiceSnapshot; source: string } = { source: 'NONE' };
  private readonly waiting = new Set<() => void>();

  private constructor(private readonly server: grpc.Server) {}

  /** Starts serving on `socketPath` (which must not exist). */
  static async start(socketPath: string, view?: TestCoordinator['view']): Promise<TestCoordinator> {
    const service = agentProtoService(
      AGENT_SERVICES.coordinator.protoFile,
      'podmin.agent.v1.Coordinator',
    );
    if (service === undefined) throw new Error('coordinator.proto has no Coordinator service');
    const server = new grpc.Server();
    const coordinatorServer = new TestCoordinator(server);
    if (view) coordinatorServer.view = view;
    server.addService(service.service, {
      watchServices: (call: Watch, reply: Reply) => coordinatorServer.watch(call, reply),
      getLeadership: (_call: unknown, reply: Reply) =>
        reply(null, { leader: false, leaderId: '', leaderAddr: '', validForMs: 0 }),
    });
    await new Promise<void>((resolve, reject) =>
      server.bindAsync(`unix://${socketPath}`, grpc.ServerCredentials.createInsecure(), (err) =>
        err ? reject(err) : resolve(),
      ),
    );
    return coordinatorServer;
  }

  /** Replaces the view and answers every waiting poll. */
  setView(snapshot: snapshotTypes.ServiceSnapshot | undefined, source = 'LEADER'): void {
    this.view = snapshot ? { snapshot, source } : { source };
    for (const wake of [...this.waiting]) wake();
  }

  /** Stops at once, failing calls in flight (as a crashed coordinator would). */
  stop(): void {
    for (const wake of [...this.waiting]) wake();
    this.server.forceShutdown();
  }

  private watch(call: Watch, reply: Reply): void {
    this.calls++;
    const revision = () => this.view.snapshot?.revision ?? '';
    const answer = (unchanged: boolean) =>
      reply(
        null,
        unchanged
          ? { source: this.view.source, unchanged: true }
          : { snapshot: this.view.snapshot, source: this.view.source, unchanged: false },
      );
    if (revision() !== call.request.knownRevision) return answer(false);
    const done = () => {
      clearTimeout(timer);
      this.waiting.delete(done);
      answer(revision() === call.request.knownRevision);
    };
    const timer = setTimeout(done, Math.min(call.request.waitMs, 60_000));
    this.waiting.add(done);
    call.on('cancelled', () => {
      clearTimeout(timer);
      this.waiting.delete(done);
    });
  }
}

/** A snapshot message of these Services (VIPs as given; one backend each, optionally). */
export function testSnapshot(
  generation: number,
  revision: string,
  services: ReadonlyArray<{ namespace: string; name: string; vip: string; backend?: string }>,
): snapshotTypes.ServiceSnapshot {
  return {
    generation,
    revision,
    services: services.map((s) => ({
      namespace: s.namespace,
      name: s.name,
      vip: s.vip,
      ports: [{ port: 80, targetPort: 8080, protocol: snapshotTypes.SnapshotPort_Protocol.TCP }],
      backends: s.backend ? [{ address: s.backend, nodeId: 'node-a' }] : [],
    })),
  };
}
