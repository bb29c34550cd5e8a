import type { ServicePayload } from '@podmin/util-manifest';
import type { NodeEndpoints } from '../snapshot/compute-snapshot';

/** A port as a Service payload holds it. */
export interface PayloadPort {
  port: number;
  targetPort?: number;
  protocol?: 'TCP' | 'UDP';
}

/** A Service payload in the shape `parseServicePayload` returns. */
export function servicePayload(
  namespace: string,
  name: string,
  selector: Record<string, string>,
  ports: readonly PayloadPort[] = [{ port: 443 }],
): ServicePayload {
  return {
    namespace,
    name,
    object: {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace },
      spec: {
        selector: { ...selector },
        ports: ports.map((p) => ({
          port: p.port,
          protocol: p.protocol ?? 'TCP',
          targetPort: p.targetPort ?? p.port,
        })),
      },
    },
  };
}

/** The YAML of a Service payload, as `deploy` would store it. */
export function serviceYaml(
  namespace: string,
  name: string,
  selector: Record<string, string>,
  port = 443,
): string {
  const labels = Object.entries(selector)
    .map(([k, v]) => `    ${k}: ${v}\n`)
    .join('');
  return [
    'apiVersion: v1',
    'kind: Service',
    'metadata:',
    `  name: ${name}`,
    `  namespace: ${namespace}`,
    'spec:',
    '  selector:',
    labels.trimEnd(),
    '  ports:',
    `  - port: ${port}`,
    '    protocol: TCP',
    `    targetPort: ${port}`,
    '',
  ].join('\n');
}

/** A node report with the /80 `2600:1f14:abc:12<n>:1::/80` and endpoints `…::<host>` inside it. */
export function nodeReport(
  n: number,
  endpoints: ReadonlyArray<{ namespace: string; labels: Record<string, string>; host: string }>,
): NodeEndpoints {
  const base = `2600:1f14:abc:12${n.toString(16).padStart(2, '0')}:1`;
  return {
    nodeId: `node-${n}`,
    prefix: `${base}::/80`,
    endpoints: endpoints.map((e) => ({
      namespace: e.namespace,
      labels: e.labels,
      address: `${base}::${e.host}`,
    })),
  };
}
