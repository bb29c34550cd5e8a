import path from 'node:path';
import {
  credentials,
  loadPackageDefinition,
  status,
  type ClientReadableStream,
  type ServiceError,
} from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import {
  PROTO_FILES,
  loadAgentProto,
  protoRoot,
  type corev1,
  type kubeletPods,
} from '@podmin/agent-contracts';
import { PodminError } from '@podmin/util-errors';

/** kubelet's default Pods API socket, relative to its root directory (`--root-dir`). */
export const PODS_API_SOCKET = 'pods-api/pods-api.sock';

/** What podmin reads of one Pod reported by kubelet. */
export interface KubeletPod {
  uid: string;
  name: string;
  namespace: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** Pending, Running, Succeeded, Failed or Unknown (empty when kubelet has no status yet). */
  phase: string;
  /** kubelet's computed PodReady condition is True. */
  ready: boolean;
  /** When the PodReady condition last changed (kubelet's 1 s resolution), if reported. */
  readyTransition?: Date;
  /** The Pod's addresses, podIPs first (kubelet also mirrors the first one in podIP). */
  podIPs: string[];
  containers: KubeletContainer[];
}

/** One container's status as kubelet reports it. */
export interface KubeletContainer {
  name: string;
  ready: boolean;
  state: 'waiting' | 'running' | 'terminated' | 'unknown';
  /** The waiting or terminated reason, when there is one. */
  reason?: string;
  /** kubelet's message with that reason (e.g. why an image pull failed), when there is one. */
  message?: string;
  image: string;
  imageID: string;
  containerID: string;
  restartCount: number;
}

/** One event of {@link KubeletPodsClient.watch}. */
export type PodEvent =
  { type: 'added' | 'modified' | 'deleted'; pod: KubeletPod } | { type: 'initial-sync-complete' };

let podType: protobuf.Type | undefined;

/** Decodes the protobuf bytes of a v1.Pod as kubelet's Pods API sends them. */
export function decodePod(bytes: Uint8Array): KubeletPod {
  podType ??= protobuf
    .loadSync(path.join(protoRoot(), PROTO_FILES.corev1Pod))
    .lookupType('k8s.io.api.core.v1.Pod');
  let raw: corev1.Pod;
  try {
    raw = podType.toObject(podType.decode(bytes), {
      longs: Number,
      defaults: false,
      arrays: true,
      objects: true,
    }) as corev1.Pod;
  } catch (err) {
    throw new PodminError(
      'INTERNAL',
      `decoding a Pod from kubelet's Pods API: ${err instanceof Error ? err.message : String(err)}`,
      { cause: err },
    );
  }
  return toKubeletPod(raw);
}

function toKubeletPod(raw: corev1.Pod): KubeletPod {
  const meta = raw.metadata;
  const st = raw.status;
  const podIPs = (st?.podIPs ?? []).map((p) => p.ip ?? '').filter((ip) => ip !== '');
  if (podIPs.length === 0 && st?.podIP) podIPs.push(st.podIP);
  const readyCondition = (st?.conditions ?? []).find((c) => c.type === 'Ready');
  const since = readyCondition?.lastTransitionTime;
  return {
    uid: meta?.uid ?? '',
    name: meta?.name ?? '',
    namespace: meta?.namespace ?? '',
    labels: { ...(meta?.labels ?? {}) },
    annotations: { ...(meta?.annotations ?? {}) },
    phase: st?.phase ?? '',
    ready: readyCondition?.status === 'True',
    ...(since?.seconds !== undefined
      ? { readyTransition: new Date(since.seconds * 1000 + Math.floor((since.nanos ?? 0) / 1e6)) }
      : {}),
    podIPs,
    containers: (st?.containerStatuses ?? []).map((c) => {
      const s = c.state;
      const state = s?.running
        ? 'running'
        : s?.terminated
          ? 'terminated'
          : s?.waiting
            ? 'waiting'
            : 'unknown';
      const reason = s?.waiting?.reason ?? s?.terminated?.reason;
      const detail = s?.waiting?.message ?? s?.terminated?.message;
      return {
        name: c.name ?? '',
        ready: c.ready ?? false,
        state,
        ...(reason ? { reason } : {}),
        ...(detail ? { message: detail } : {}),
        image: c.image ?? '',
        imageID: c.imageID ?? '',
        containerID: c.containerID ?? '',
        restartCount: c.restartCount ?? 0,
      };
    }),
  };
}

type Callback<T> = (err: ServiceError | null, res: T) => void;
interface PodsStub {
  listPods(
    req: kubeletPods.ListPodsRequest,
    opts: object,
    cb: Callback<kubeletPods.ListPodsResponse>,
  ): void;
  getPod(
    req: kubeletPods.GetPodRequest,
    opts: object,
    cb: Callback<kubeletPods.GetPodResponse>,
  ): void;
  watchPods(req: kubeletPods.WatchPodsRequest): ClientReadableStream<kubeletPods.WatchPodsEvent>;
  close(): void;
}

const EVENT_TYPES: Record<string, 'added' | 'modified' | 'deleted' | undefined> = {
  ADDED: 'added',
  MODIFIED: 'modified',
  DELETED: 'deleted',
};

/**
 * A client of kubelet's local Pods API over its Unix socket (`<kubelet root>/pods-api/pods-api.sock`):
 * ListPods, GetPod and WatchPods, with Pods decoded to {@link KubeletPod}. The coordinator's
 * readiness watch and the node tier use it.
 */
export class KubeletPodsClient {
  private readonly stub: PodsStub;

  constructor(readonly socketPath: string) {
    const definition = loadAgentProto(PROTO_FILES.kubeletPods);
    const pkg = loadPackageDefinition(definition) as unknown as {
      v1alpha1: { Pods: new (address: string, creds: unknown) => PodsStub };
    };
    this.stub = new pkg.v1alpha1.Pods(`unix://${socketPath}`, credentials.createInsecure());
  }

  /** Every Pod kubelet runs. */
  async list(timeoutMs = 10_000): Promise<KubeletPod[]> {
    const res = await this.unary<kubeletPods.ListPodsResponse>(
      'ListPods',
      (opts, cb) => this.stub.listPods({}, opts, cb),
      timeoutMs,
    );
    return res.pods.map((bytes) => decodePod(bytes));
  }

  /** One Pod by UID, or undefined when kubelet does not know it. */
  async get(uid: string, timeoutMs = 10_000): Promise<KubeletPod | undefined> {
    try {
      const res = await this.unary<kubeletPods.GetPodResponse>(
        'GetPod',
        (opts, cb) => this.stub.getPod({ podUID: uid }, opts, cb),
        timeoutMs,
      );
      return decodePod(res.pod);
    } catch (err) {
      if (err instanceof PodminError && err.code === 'NOT_FOUND') return undefined;
      throw err;
    }
  }

  /**
   * Streams Pod events: every current Pod as `added`, then `initial-sync-complete`, then
   * changes. Ends when `signal` aborts (without error) or the stream breaks (with one).
   */
  async *watch(signal?: AbortSignal): AsyncGenerator<PodEvent> {
    const stream = this.stub.watchPods({});
    const onAbort = () => stream.cancel();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      for await (const event of stream as AsyncIterable<kubeletPods.WatchPodsEvent>) {
        const type = String(event.type);
        if (type === 'INITIAL_SYNC_COMPLETE') {
          yield { type: 'initial-sync-complete' };
          continue;
        }
        const mapped = EVENT_TYPES[type];
        if (mapped) yield { type: mapped, pod: decodePod(event.pod) };
      }
    } catch (err) {
      if (signal?.aborted && (err as ServiceError).code === status.CANCELLED) return;
      throw this.error('WatchPods', err as ServiceError);
    } finally {
      signal?.removeEventListener('abort', onAbort);
      stream.cancel();
    }
  }

  close(): void {
    this.stub.close();
  }

  private unary<T>(
    method: string,
    call: (opts: { deadline: Date }, cb: Callback<T>) => void,
    timeoutMs = 10_000,
  ): Promise<T> {
    return new Promise((resolve, reject) => {
      call({ deadline: new Date(Date.now() + timeoutMs) }, (err, res) =>
        err ? reject(this.error(method, err)) : resolve(res),
      );
    });
  }

  private error(method: string, err: ServiceError): PodminError {
    const code =
      err.code === status.NOT_FOUND
        ? 'NOT_FOUND'
        : err.code === status.UNAVAILABLE || err.code === status.DEADLINE_EXCEEDED
          ? 'SERVICE_UNAVAILABLE'
          : 'INTERNAL';
    return new PodminError(
      code,
      `calling kubelet's Pods API ${method} on ${this.socketPath}: ${err.details || err.message}`,
      { cause: err },
    );
  }
}
