/** What a test varies in {@link daemonSetManifest}. */
export interface TestDaemonSet {
  /** DaemonSet (and Service) name; `web` when omitted. */
  name?: string;
  /** `product` when omitted. */
  namespace?: string;
  /** The container image; `hello:v1` when omitted. */
  image?: string;
  /** The NodeGroup it selects; `default` when omitted. */
  nodegroup?: string;
  /** A Parameter Store secret the Pod mounts (the `podmin.dev/aws-parameter-store` annotation). */
  secret?: string;
  /** With a Service of the same name: its port, forwarded to `targetPort` 8443. */
  servicePort?: number;
  /** The `app` label that Service selects; the DaemonSet's own name when omitted. */
  serviceSelector?: string;
  /** Containers by name → image, in order (instead of one container named like the DaemonSet). */
  containers?: Readonly<Record<string, string>>;
  /** Init containers by name → image, in order. */
  initContainers?: Readonly<Record<string, string>>;
}

/** `[{ name: a, image: "x" }, …]` of name → image. */
function containerList(entries: Readonly<Record<string, string>>): string {
  return `[${Object.entries(entries)
    .map(([name, image]) => `{ name: ${name}, image: "${image}" }`)
    .join(', ')}]`;
}

/**
 * A DaemonSet manifest (and optionally its Service) as a user deploys it (one container unless
 * `containers` names several), for
 * agent specs that commit desired state: plain YAML text, so this library needs no manifest code.
 */
export function daemonSetManifest(options: TestDaemonSet = {}): string {
  const {
    name = 'web',
    namespace = 'product',
    image = 'hello:v1',
    nodegroup = 'default',
  } = options;
  const annotations =
    options.secret === undefined
      ? ''
      : `\n      annotations: { podmin.dev/aws-parameter-store: "${options.secret}" }`;
  const init =
    options.initContainers === undefined
      ? ''
      : `      initContainers: ${containerList(options.initContainers)}\n`;
  const daemonSet = `apiVersion: apps/v1
kind: DaemonSet
metadata: { name: ${name}, namespace: ${namespace} }
spec:
  selector: { matchLabels: { app: ${name} } }
  template:
    metadata:
      labels: { app: ${name} }${annotations}
    spec:
      nodeSelector: { podmin.dev/nodegroup: ${nodegroup} }
${init}      containers: ${containerList(options.containers ?? { [name]: image })}
`;
  if (options.servicePort === undefined) return daemonSet;
  return `${daemonSet}---
apiVersion: v1
kind: Service
metadata: { name: ${name}, namespace: ${namespace} }
spec:
  selector: { app: ${options.serviceSelector ?? name} }
  ports: [{ port: ${options.servicePort}, targetPort: 8443 }]
`;
}
