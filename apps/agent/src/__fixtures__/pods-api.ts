// A stand-in for kubelet's Pods API on a real gRPC Unix socket, for specs that run the built
// agent without a kubelet: it lists fixed Pods (Running, Ready, one IPv6 each) and keeps the
// watch open after the initial sync, as kubelet does.
import path from 'node:path';
import {
  Server,
  ServerCredentials,
  loadPackageDefinition,
  type ServerWritableStream,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { PROTO_FILES, loadAgentProto, protoRoot } from '@podmin/agent-contracts';

/** A Ready Pod as the stand-in reports it. */
export interface ReadyPod {
  readonly name: string;
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly ipv6: string;
}

/** The v1.Pod message type kubelet's Pods API sends. */
export function podMessageType(): protobuf.Type {
  return protobuf
    .loadSync(path.join(protoRoot(), PROTO_FILES.corev1Pod))
    .lookupType('k8s.io.api.core.v1.Pod');
}

/**
 * Serves kubelet's Pods API on `socket`: ListPods answers `list()` (encoded v1.Pods), WatchPods
 * sends them with the initial sync and then stays open, as kubelet does.
 */
export async function servePodsList(
  socket: string,
  list: () => readonly Buffer[],
): Promise<{ close: () => void }> {
  const pkg = loadPackageDefinition(loadAgentProto(PROTO_FILES.kubeletPods)) as unknown as {
    v1alpha1: { Pods: { service: Parameters<Server['addService']>[0] } };
  };
  const server = new Server();
  const impl: UntypedServiceImplementation = {
    ListPods: (_call: unknown, cb: (err: null, value: unknown) => void) =>
      cb(null, { pods: list() }),
    WatchPods: (call: ServerWritableStream<unknown, unknown>) => {
      for (const pod of list()) call.write({ type: 'ADDED', pod });
      call.write({ type: 'INITIAL_SYNC_COMPLETE' });
    },
  };
  server.addService(pkg.v1alpha1.Pods.service, impl);
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix://${socket}`, ServerCredentials.createInsecure(), (err) =>
      err ? reject(err) : resolve(),
    ),
  );
  return { close: () => server.forceShutdown() };
}

/** Serves `pods` on `socket` until the returned `close`. */
export async function servePodsApi(
  socket: string,
  pods: readonly ReadyPod[],
): Promise<{ close: () => void }> {
  const podType = podMessageType();
  const encoded = pods.map((pod, i) =>
    Buffer.from(
      podType
        .encode(
          podType.fromObject({
            metadata: {
              name: pod.name,
              namespace: pod.namespace,
              uid: `uid-${i}`,
              labels: pod.labels,
            },
            status: {
              phase: 'Running',
              conditions: [{ type: 'Ready', status: 'True' }],
              podIP: pod.ipv6,
              podIPs: [{ ip: pod.ipv6 }],
            },
          }),
        )
        .finish(),
    ),
  );
  return servePodsList(socket, () => encoded);
}
