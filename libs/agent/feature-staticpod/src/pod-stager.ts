import { stringifyCanonical } from '@podmin/util-manifest';
import { podRevision } from '@podmin/util-receipts';
import { parsePodBytes, parseServiceBytes, readPayload } from '@podmin/data-access-desired-state';
import type { NodePaths } from './node-paths';
import {
  SERVICE_ANNOTATION,
  declaredSecrets,
  deploymentRevision,
  transformPod,
  type PodObject,
} from './pod-transform';
import { podOwner } from './static-pod-files';
import type { StagedPod } from './static-pod-publisher';
import type {
  DesiredService,
  DesiredStateReader,
  IdentityIssuer,
  SecretSource,
} from './staticpod.ports';

/**
 * Stages deployments for the reconciler: fetches and verifies their payloads (cached while
 * referenced), fetches the secrets not yet on disk, ensures each Pod's identity and renders the
 * static Pod it publishes.
 */
export class PodStager {
  private readonly payloads = new Map<string, Buffer>();

  constructor(
    private readonly options: {
      cluster: string;
      nodeAddress: string;
      paths: NodePaths;
    },
    private readonly store: DesiredStateReader,
    private readonly secrets: SecretSource,
    private readonly identity: IdentityIssuer,
    /** `<pod>/<revision>` whose secrets are on disk (the publisher's). */
    private readonly secretsOnDisk: ReadonlySet<string>,
  ) {}

  /** A payload's bytes, from the cache when it holds them. */
  async fetchPayload(key: string, signal: AbortSignal): Promise<Buffer> {
    const cached = this.payloads.get(key);
    if (cached) return cached;
    const body = await readPayload(this.store, key, { signal });
    this.payloads.set(key, body);
    return body;
  }

  /** Drops cached payloads not in `referenced`, so memory stays bounded by what runs. */
  retain(referenced: ReadonlySet<string>): void {
    for (const key of this.payloads.keys()) if (!referenced.has(key)) this.payloads.delete(key);
  }

  /** Fetches, verifies and transforms one deployment: its Pod, Service, secrets and identity. */
  async stage(
    key: string,
    entry: { pod: string; service?: string | undefined },
    staticName: string,
    signal: AbortSignal,
  ): Promise<StagedPod> {
    // The same strict parser and validator the CLI deploys with; payloads are never trusted raw.
    const payload = parsePodBytes(entry.pod, await this.fetchPayload(entry.pod, signal));
    const pod = payload.pod as unknown as PodObject;
    const { name, namespace } = payload;
    let service: DesiredService | undefined;
    if (entry.service) {
      const parsed = parseServiceBytes(
        entry.service,
        await this.fetchPayload(entry.service, signal),
      );
      service = {
        namespace: parsed.namespace,
        name: parsed.name,
        owner: key,
        object: parsed.object,
      };
    }
    const revision = deploymentRevision(entry.pod, entry.service);
    const declared = declaredSecrets(pod);
    const secrets: StagedPod['secrets'] = [];
    if (!this.secretsOnDisk.has(`${name}/${revision}`)) {
      for (const [provider, keys] of declared) {
        for (const secretKey of keys) {
          const value = await this.secrets.fetch(
            provider,
            `/${this.options.cluster}/${namespace}/${name}/${secretKey}`,
          );
          signal.throwIfAborted();
          secrets.push({ provider, key: secretKey, value });
        }
      }
    }
    const serviceName = pod.metadata.annotations?.[SERVICE_ANNOTATION];
    const { fingerprint, notAfter } = await this.identity.ensure({
      pod: name,
      namespace,
      ...(serviceName ? { service: serviceName } : {}),
    });
    signal.throwIfAborted();
    const transformed = transformPod({
      pod,
      revision,
      identityFingerprint: fingerprint,
      root: this.options.paths.root,
      workloads: this.options.paths.workloads,
      nodeAddress: this.options.nodeAddress,
      secretProviders: [...declared.keys()],
      origin: { deployment: key, pod: entry.pod, service: entry.service, staticName },
    });
    return {
      key,
      name: staticName,
      podName: name,
      payloadKey: entry.pod,
      servicePayload: entry.service,
      revision,
      namespace,
      payloadRevision: podRevision(entry.pod),
      identityExpiry: notAfter || undefined,
      yaml: stringifyCanonical(transformed),
      secrets,
      service,
      owner: podOwner(pod),
    };
  }
}
