import { workloadSecretName, type SecretProviderName } from '@podmin/data-access-secrets';
import { imageMirrorPath, pinnedImageSource, type PinnedImage } from '@podmin/util-dependencies';
import {
  AWS_PARAMETER_STORE_ANNOTATION,
  AWS_SECRETS_MANAGER_ANNOTATION,
  CLUSTER_REGISTRY,
  NODEGROUP_SELECTOR_KEY,
  ORIGIN_ANNOTATION,
  stringifyCanonical,
} from '@podmin/util-manifest';
import type { MirroredImage } from './install.ports';

/** The DaemonSet, Pod and container name of the cloudflared install. */
export const CLOUDFLARED_NAME = 'cloudflared';

/** The namespace of the cloudflared Pod (and of its tunnel-token secret path). */
export const CLOUDFLARED_NAMESPACE = 'platform-cloudflared';

/** The secret key holding the Cloudflare Tunnel token. */
export const TUNNEL_TOKEN_KEY = 'tunnel-token';

/** The `podmin.dev/origin` value `podmin list` shows for this install. */
export const CLOUDFLARED_ORIGIN = 'install/cloudflared';

/** cloudflared's metrics and readiness listener (`--metrics`), probed by kubelet. */
export const CLOUDFLARED_METRICS_PORT = 2000;

/** The non-root user (and group) of the upstream image, `nonroot` (65532). */
export const CLOUDFLARED_USER = 65532;

/** The cloudflared binary in the upstream image. */
export const CLOUDFLARED_BINARY = '/usr/local/bin/cloudflared';

/** `/<cluster>/platform-cloudflared/cloudflared/tunnel-token`. */
export function tunnelTokenSecretName(cluster: string): string {
  return workloadSecretName({
    cluster,
    namespace: CLOUDFLARED_NAMESPACE,
    pod: CLOUDFLARED_NAME,
    key: TUNNEL_TOKEN_KEY,
  });
}

/** Where the agent mounts the token inside the container (the spec's per-provider path). */
export function tunnelTokenMountPath(provider: SecretProviderName): string {
  return `/var/run/podmin/${provider}/${TUNNEL_TOKEN_KEY}`;
}

/** The pinned image as the mirror publishes it: upstream source, `mirror/` path, digest. */
export function mirroredImage(image: PinnedImage): MirroredImage {
  return {
    source: pinnedImageSource(image),
    version: image.version,
    path: imageMirrorPath(image),
    digest: image.digest,
  };
}

/** The Pod's image: the mirror in the cluster registry, by digest so the bytes cannot drift. */
export function clusterImageReference(image: PinnedImage): string {
  return `${CLUSTER_REGISTRY}/${imageMirrorPath(image)}@${image.digest}`;
}

/**
 * The cloudflared DaemonSet for `nodegroup`, as text `buildDeployment` validates like any
 * manifest: a remotely managed tunnel (`tunnel run --token-file`, routes configured at
 * Cloudflare) that runs as the image's non-root user with a read-only root filesystem, no
 * privilege escalation, no capabilities and the runtime's seccomp profile, within resource
 * limits; the token is mounted by the agent from `provider` through the secret annotation, and
 * kubelet restarts it when `/ready` on the metrics port keeps failing.
 */
export function cloudflaredDaemonSet(options: {
  nodegroup: string;
  provider: SecretProviderName;
  image: PinnedImage;
}): string {
  const labels = { 'app.kubernetes.io/name': CLOUDFLARED_NAME };
  const secretAnnotation =
    options.provider === 'aws-secrets-manager'
      ? AWS_SECRETS_MANAGER_ANNOTATION
      : AWS_PARAMETER_STORE_ANNOTATION;
  const daemonSet = {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: CLOUDFLARED_NAME, namespace: CLOUDFLARED_NAMESPACE, labels },
    spec: {
      selector: { matchLabels: labels },
      template: {
        metadata: {
          labels,
          annotations: {
            [ORIGIN_ANNOTATION]: CLOUDFLARED_ORIGIN,
            [secretAnnotation]: TUNNEL_TOKEN_KEY,
          },
        },
        spec: {
          nodeSelector: { [NODEGROUP_SELECTOR_KEY]: options.nodegroup },
          securityContext: {
            runAsNonRoot: true,
            runAsUser: CLOUDFLARED_USER,
            runAsGroup: CLOUDFLARED_USER,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          containers: [
            {
              name: CLOUDFLARED_NAME,
              image: clusterImageReference(options.image),
              // The digest cannot change, so a restart need not ask the registry again.
              imagePullPolicy: 'IfNotPresent',
              command: [CLOUDFLARED_BINARY],
              args: [
                'tunnel',
                '--no-autoupdate',
                '--metrics',
                `0.0.0.0:${CLOUDFLARED_METRICS_PORT}`,
                'run',
                '--token-file',
                tunnelTokenMountPath(options.provider),
              ],
              ports: [
                { name: 'metrics', containerPort: CLOUDFLARED_METRICS_PORT, protocol: 'TCP' },
              ],
              // /ready answers 200 only with a live edge connection; the delay and threshold give
              // a starting connector a minute before kubelet restarts it.
              livenessProbe: {
                httpGet: { path: '/ready', port: CLOUDFLARED_METRICS_PORT },
                initialDelaySeconds: 10,
                periodSeconds: 10,
                timeoutSeconds: 3,
                failureThreshold: 6,
              },
              resources: {
                requests: { cpu: '50m', memory: '64Mi' },
                limits: { cpu: '500m', memory: '256Mi' },
              },
              securityContext: {
                runAsNonRoot: true,
                runAsUser: CLOUDFLARED_USER,
                runAsGroup: CLOUDFLARED_USER,
                readOnlyRootFilesystem: true,
                allowPrivilegeEscalation: false,
                privileged: false,
                capabilities: { drop: ['ALL'] },
              },
            },
          ],
        },
      },
    },
  };
  return stringifyCanonical(daemonSet);
}
