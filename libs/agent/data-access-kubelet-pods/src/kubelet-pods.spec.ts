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
import { makeTempDir } from '@podmin/testing';
import { KubeletPodsClient, decodePod, type PodEvent } from './kubelet-pods';

// A stand-in kubelet serving the Pods API on a real gRPC Unix socket; the node tier runs the
// same client against a real kubelet 1.36.
const podType = protobuf
  .loadSync(path.join(protoRoot(), PROTO_FILES.corev1Pod))
  .lookupType('k8s.io.api.core.v1.Pod');

function encodePod(name: string, uid: string, ready: boolean, ip?: string): Buffer {
  return Buffer.from(
    podType
      .encode(
        podType.fromObject({
          metadata: {
            name,
            namespace: 'default',
            uid,
            labels: { app: name },
            annotations: { 'podmin.dev/revision': 'r1' },
          },
          status: {
            phase: 'Running',
            conditions: [
              { type: 'PodScheduled', status: 'True' },
              {
                type: 'Ready',
                status: ready ? 'True' : 'False',
                lastTransitionTime: { seconds: 1_700_000_000, nanos: 250_000_000 },
              },
            ],
            ...(ip ? { podIP: ip, podIPs: [{ ip }] } : {}),
            containerStatuses: [
              {
                name,
                ready,
                restartCount: 2,
                image: `registry.podmin.internal/apps/${name}:v1`,
                imageID: 'sha256:abc',
                containerID: 'containerd://123',
                state: ready
                  ? { running: { startedAt: { seconds: 1 } } }
                  : { waiting: { reason: 'ErrImagePull', message: 'pull access denied' } },
              },
            ],
          },
        }),
      )
      .finish(),
  );
}

describe('KubeletPodsClient against a gRPC Pods API server on a Unix socket', () => {
  let server: Server;
  let socket: string;
  let client: KubeletPodsClient;
  let cleanup: () => Promise<void>;
  const pods = new Map<string, Buffer>();
  let watchers: ServerWritableStream<unknown, unknown>[] = [];

  beforeAll(async () => {
    const tmp = await makeTempDir('kubelet-pods-');
    cleanup = tmp.cleanup;
    socket = path.join(tmp.path, 'pods-api.sock');
    const pkg = loadPackageDefinition(loadAgentProto(PROTO_FILES.kubeletPods)) as unknown as {
      v1alpha1: { Pods: { service: Parameters<Server['addService']>[0] } };
    };
    server = new Server();
    const impl: UntypedServiceImplementation = {
      ListPods: (_call: ServerUnaryCall<unknown, unknown>, cb: sendUnaryData<unknown>) =>
        cb(null, { pods: [...pods.values()] }),
      GetPod: (call: ServerUnaryCall<{ podUID: string }, unknown>, cb: sendUnaryData<unknown>) => {
        const pod = pods.get(call.request.podUID);
        if (pod) cb(null, { pod });
        else cb({ code: status.NOT_FOUND, details: `pod ${call.request.podUID} not found` });
      },
      WatchPods: (call: ServerWritableStream<unknown, unknown>) => {
        for (const pod of pods.values()) call.write({ type: 'ADDED', pod });
        call.write({ type: 'INITIAL_SYNC_COMPLETE' });
        watchers.push(call);
        call.on('cancelled', () => (watchers = watchers.filter((w) => w !== call)));
      },
    };
    server.addService(pkg.v1alpha1.Pods.service, impl);
    await new Promise<void>((resolve, reject) =>
      server.bindAsync(`unix://${socket}`, ServerCredentials.createInsecure(), (err) =>
        err ? reject(err) : resolve(),
      ),
    );
    client = new KubeletPodsClient(socket);
  });

  afterAll(async () => {
    client.close();
    server.forceShutdown();
    await cleanup();
  });

  beforeEach(() => {
    pods.clear();
    pods.set('u1', encodePod('web-node', 'u1', true, 'fd00:1::2'));
    pods.set('u2', encodePod('db-node', 'u2', false));
  });

  it('lists every Pod with readiness, addresses and container states', async () => {
    const list = await client.list();
    expect(list.map((p) => [p.name, p.uid, p.ready, p.podIPs])).toEqual([
      ['web-node', 'u1', true, ['fd00:1::2']],
      ['db-node', 'u2', false, []],
    ]);
    const [web, db] = list;
    expect(web?.labels).toEqual({ app: 'web-node' });
    expect(web?.readyTransition?.toISOString()).toBe('2023-11-14T22:13:20.250Z');
    expect(web?.annotations['podmin.dev/revision']).toBe('r1');
    expect(web?.containers).toEqual([
      {
        name: 'web-node',
        ready: true,
        state: 'running',
        image: 'registry.podmin.internal/apps/web-node:v1',
        imageID: 'sha256:abc',
        containerID: 'containerd://123',
        restartCount: 2,
      },
    ]);
    expect(db?.containers[0]).toMatchObject({
      state: 'waiting',
      reason: 'ErrImagePull',
      message: 'pull access denied',
    });
  });

  it('gets one Pod by UID and answers undefined for an unknown UID', async () => {
    expect((await client.get('u2'))?.name).toBe('db-node');
    expect(await client.get('missing')).toBeUndefined();
  });

  it('watches: current Pods, the initial sync marker, then changes; stops on abort', async () => {
    const abort = new AbortController();
    const seen: PodEvent[] = [];
    const done = (async () => {
      for await (const event of client.watch(abort.signal)) {
        seen.push(event);
        if (event.type === 'initial-sync-complete') {
          pods.set('u2', encodePod('db-node', 'u2', true, 'fd00:1::3'));
          for (const w of watchers) w.write({ type: 'MODIFIED', pod: pods.get('u2') });
        }
        if (event.type === 'modified') abort.abort();
      }
    })();
    await done;
    expect(
      seen.map((e) =>
        e.type === 'initial-sync-complete' ? e.type : `${e.type} ${e.pod.name} ${e.pod.ready}`,
      ),
    ).toEqual([
      'added web-node true',
      'added db-node false',
      'initial-sync-complete',
      'modified db-node true',
    ]);
  });

  it('names the socket when kubelet is not there', async () => {
    const absent = new KubeletPodsClient(path.join(path.dirname(socket), 'absent.sock'));
    await expect(absent.list(2000)).rejects.toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      message: expect.stringContaining('absent.sock'),
    });
    absent.close();
  });

  it('decodes an empty Pod to empty fields rather than failing', () => {
    expect(decodePod(new Uint8Array())).toMatchObject({ name: '', ready: false, podIPs: [] });
  });

  it('reports undecodable bytes as an error naming the Pods API', () => {
    expect(() => decodePod(Uint8Array.from([0x0a, 0xff]))).toThrow(/Pods API/);
  });
});
