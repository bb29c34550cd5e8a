import { stringify } from 'yaml';

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

/** One port of the Service in {@link daemonSetYaml}. */
export interface TestServicePort {
  port: number;
  targetPort?: number;
  protocol?: string;
}

/** What a test varies in {@link daemonSetYaml}. */
export interface TestDaemonSetYaml {
  /** DaemonSet name and its `app` label; `web` when omitted. */
  name?: string;
  /** Omitted from metadata (the DaemonSet's and the Service's) when not given. */
  namespace?: string;
  /** The NodeGroup it selects; `default` when omitted. */
  nodegroup?: string;
  /** The image of the one container (named like the DaemonSet); `hello:v1` when omitted. */
  image?: string;
  /** Containers by name → image, in order (instead of the one container). */
  containers?: Readonly<Record<string, string>>;
  /** The Pod template's annotations. */
  annotations?: Readonly<Record<string, string>>;
  /** A Service after the DaemonSet, in its namespace. */
  service?: {
    /** The DaemonSet's name when omitted. */
    name?: string;
    /** The `app` label it selects; the DaemonSet's name when omitted. */
    selector?: string;
    ports: readonly TestServicePort[];
  };
}

/**
 * The same manifests as {@link daemonSetManifest}, but in the block style `kubectl` and most
 * users write (`- name: web` lists, one key a line), for specs that edit the text line by line.
 */
export function daemonSetYaml(options: TestDaemonSetYaml = {}): string {
  const { name = 'web', namespace, nodegroup = 'default', image = 'hello:v1' } = options;
  const metadata = (objectName: string) =>
    namespace === undefined ? { name: objectName } : { name: objectName, namespace };
  const containers = Object.entries(options.containers ?? { [name]: image }).map(
    ([container, containerImage]) => ({ name: container, image: containerImage }),
  );
  const documents: unknown[] = [
    {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: metadata(name),
      spec: {
        selector: { matchLabels: { app: name } },
        template: {
          metadata: {
            labels: { app: name },
            ...(options.annotations && { annotations: options.annotations }),
          },
          spec: { nodeSelector: { 'podmin.dev/nodegroup': nodegroup }, containers },
        },
      },
    },
  ];
  const { service } = options;
  if (service !== undefined) {
    documents.push({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: metadata(service.name ?? name),
      spec: { selector: { app: service.selector ?? name }, ports: service.ports },
    });
  }
  return documents.map((document) => stringify(document, { lineWidth: 0 })).join('---\n');
}
