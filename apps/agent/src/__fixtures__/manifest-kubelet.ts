import fs from 'node:fs';
import path from 'node:path';
import type protobuf from 'protobufjs';
import { parse as parseYaml } from 'yaml';
import { podMessageType, servePodsList } from './pods-api';

/** How the stand-in runs what a manifest asks for. */
export interface ManifestKubeletOptions {
  /** A Pod becomes Ready this long after its manifest appeared. */
  readonly startMs: number;
  /** Pods whose image contains this never become Ready and report an image pull failure. */
  readonly brokenImage: string;
}

interface Running {
  readonly uid: string;
  readonly seenMs: number;
  readonly name: string;
  readonly namespace: string;
  readonly labels: Record<string, string>;
  readonly annotations: Record<string, string>;
  readonly broken: boolean;
  readonly container: string;
  readonly image: string;
}

/**
 * A stand-in kubelet for nodes without a node stack (the netns tier): it follows a node's
 * static-Pod directory as kubelet does, runs each manifest as a Pod that turns Ready after
 * `startMs` (never, with the broken image), and serves kubelet's Pods API on a real
 * gRPC Unix socket with the manifest's name, labels and annotations. Pods get no address, so
 * they are never Service backends. Synthetic readiness; the node tier uses a real kubelet.
 */
export class ManifestKubelet {
  private server: { close: () => void } | undefined;
  private podType: protobuf.Type | undefined;
  private readonly running = new Map<string, Running>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly socket: string,
    private readonly manifests: string,
    private readonly options: ManifestKubeletOptions,
  ) {}

  async start(): Promise<void> {
    this.podType = podMessageType();
    this.server = await servePodsList(this.socket, () => {
      this.scan();
      return [...this.running.values()].map((p) => this.encode(p));
    });
    this.timer = setInterval(() => this.scan(), 100);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.server?.close();
    fs.rmSync(this.socket, { force: true });
  }

  /** The Pods running now: manifest name, image, and whether it is Ready. */
  pods(): Array<{ name: string; image: string; ready: boolean }> {
    this.scan();
    return [...this.running.values()].map((p) => ({
      name: p.name,
      image: p.image,
      ready: this.ready(p),
    }));
  }

  private ready(p: Running): boolean {
    return !p.broken && Date.now() - p.seenMs >= this.options.startMs;
  }

  /** Follows the directory: a new or changed manifest is a new Pod, a removed one is gone. */
  private scan(): void {
    let files: string[] = [];
    try {
      files = fs
        .readdirSync(this.manifests)
        .filter((f) => f.endsWith('.yaml') && !f.startsWith('.'));
    } catch {
      files = [];
    }
    const seen = new Set<string>();
    for (const file of files) {
      let text: string;
      try {
        text = fs.readFileSync(path.join(this.manifests, file), 'utf8');
      } catch {
        continue;
      }
      const uid = `${file}:${text.length}:${hash(text)}`;
      seen.add(uid);
      if (this.running.has(uid)) continue;
      const pod = parseYaml(text) as {
        metadata: {
          name: string;
          namespace?: string;
          labels?: Record<string, string>;
          annotations?: Record<string, string>;
        };
        spec: { containers: Array<{ name: string; image: string }> };
      };
      const container = pod.spec.containers[0];
      this.running.set(uid, {
        uid,
        seenMs: Date.now(),
        name: pod.metadata.name,
        namespace: pod.metadata.namespace ?? 'default',
        labels: pod.metadata.labels ?? {},
        annotations: pod.metadata.annotations ?? {},
        broken: (container?.image ?? '').includes(this.options.brokenImage),
        container: container?.name ?? 'main',
        image: container?.image ?? '',
      });
    }
    for (const uid of [...this.running.keys()]) if (!seen.has(uid)) this.running.delete(uid);
  }

  private encode(p: Running): Buffer {
    const type = this.podType as protobuf.Type;
    const ready = this.ready(p);
    return Buffer.from(
      type
        .encode(
          type.fromObject({
            metadata: {
              name: p.name,
              namespace: p.namespace,
              uid: p.uid,
              labels: p.labels,
              annotations: p.annotations,
            },
            status: {
              phase: p.broken ? 'Pending' : 'Running',
              conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
              containerStatuses: [
                {
                  name: p.container,
                  ready,
                  restartCount: 0,
                  state: p.broken
                    ? { waiting: { reason: 'ErrImagePull', message: 'manifest unknown' } }
                    : { running: {} },
                },
              ],
            },
          }),
        )
        .finish(),
    );
  }
}

function hash(text: string): string {
  let h = 0;
  for (let i = 0; i < text.length; i++) h = (h * 31 + text.charCodeAt(i)) | 0;
  return (h >>> 0).toString(16);
}
