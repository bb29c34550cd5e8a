import { ValidationError } from '@podmin/util-errors';
import type { FieldProblem } from '@podmin/util-errors';
import { NODEGROUP_SELECTOR_KEY, RESERVED_NAMESPACE } from './constants';
import { checkImageOverrides, checkQuantity } from './flags';
import type { ImageOverrides, PortMapping } from './flags';
import { checkClusterImage } from './image-reference';
import { DNS1123_LABEL_RULE, isDns1123Label } from './names';
import { hostBindingPaths } from './pod-spec';
import { stringifyOrdered } from './yaml';

/** Options for the built-in minimal DaemonSet written by `init` and used by `deploy` without `--file`. */
export interface BuiltInOptions {
  /** DaemonSet (and Pod) name. */
  name: string;
  /** NodeGroup the Pod runs on. */
  nodegroup: string;
  /** Namespace; defaults to `default`. */
  namespace?: string;
  /** Container images: one bare image or one container per name. */
  images: ImageOverrides;
  /** Add a matching Service (requires exactly one container). */
  service?: boolean;
  /** Service ports replacing the default 443→8443; requires `service`. */
  ports?: PortMapping[];
  /** CPU limit for every container. */
  cpu?: string;
  /** Memory limit for every container. */
  memory?: string;
}

/** Default Service port of the built-in manifest. */
export const DEFAULT_SERVICE_PORT = 443;
/** Default container port the built-in Service targets, probed over HTTPS at /healthz. */
export const DEFAULT_TARGET_PORT = 8443;

/** Label key the built-in manifest selects its Pods by. */
export const APP_NAME_LABEL = 'app.kubernetes.io/name';

function invalidArgument(problems: FieldProblem[]): ValidationError {
  return new ValidationError('invalid arguments', problems, { code: 'INVALID_ARGUMENT' });
}

/** Throws INVALID_ARGUMENT unless at least one `--image` was given (required by `init`). */
export function assertInitImages(images: ImageOverrides): void {
  if (images.bare === undefined && images.named.size === 0) {
    throw invalidArgument([
      {
        field: '--image',
        message:
          'is required: pass --image <reference> or one --image <container>=<reference> per container',
      },
    ]);
  }
}

/** Flags that only shape the built-in manifest and are rejected together with `--file`. */
export interface BuiltInOnlyFlags {
  cpu?: string;
  memory?: string;
  ports?: readonly PortMapping[] | readonly string[];
}

/** Throws INVALID_ARGUMENT naming each of `--cpu`, `--memory`, `--port` given alongside `--file`. */
export function assertNoBuiltInOnlyFlags(flags: BuiltInOnlyFlags): void {
  const problems: FieldProblem[] = [];
  const given: [string, boolean][] = [
    ['--port', (flags.ports?.length ?? 0) > 0],
    ['--cpu', flags.cpu !== undefined],
    ['--memory', flags.memory !== undefined],
  ];
  for (const [flag, present] of given) {
    if (present) {
      problems.push({
        field: flag,
        message:
          'only applies to the built-in manifest and cannot be used with --file; set it in the manifest instead',
      });
    }
  }
  if (problems.length > 0) {
    throw invalidArgument(problems);
  }
}

/**
 * The explicit `spec.updateStrategy` of the built-in manifest: zero downtime (each node starts
 * the new Pod beside the old one, which stops once the new one is available: maxSurge 1,
 * maxUnavailable 0), unless the Pod binds host ports or the host network, which the two Pods
 * could not share (maxSurge 0, maxUnavailable 1: the old Pod stops first).
 */
export function builtInUpdateStrategy(podSpec: Record<string, unknown>): {
  type: 'RollingUpdate';
  rollingUpdate: { maxSurge: number; maxUnavailable: number };
} {
  const surge = hostBindingPaths(podSpec, 'spec').length === 0;
  return {
    type: 'RollingUpdate',
    rollingUpdate: surge ? { maxSurge: 1, maxUnavailable: 0 } : { maxSurge: 0, maxUnavailable: 1 },
  };
}

/**
 * Renders the built-in DaemonSet (and, with `service`, a `---`-separated Service) as YAML that
 * {@link buildDeployment} accepts. Images are resolved to cluster references.
 */
export function renderBuiltInManifest(opts: BuiltInOptions): string {
  const problems: FieldProblem[] = [];
  const namespace = opts.namespace ?? 'default';
  const label = (field: string, value: string): void => {
    if (value === RESERVED_NAMESPACE && field === '--namespace') {
      problems.push({
        field,
        message: `"${value}" is reserved for podmin system secrets; choose another namespace`,
      });
    } else if (!isDns1123Label(value)) {
      problems.push({ field, message: `"${value}" is invalid; it must be ${DNS1123_LABEL_RULE}` });
    }
  };
  label('<name>', opts.name);
  label('--nodegroup', opts.nodegroup);
  label('--namespace', namespace);
  problems.push(...checkImageOverrides(opts.images));

  const ports = opts.ports ?? [];
  if (ports.length > 0 && opts.service !== true) {
    problems.push({
      field: '--port',
      message: 'requires --service; it sets the ports of the built-in Service',
    });
  }
  const seenPorts = new Set<number>();
  for (const mapping of ports) {
    for (const value of [mapping.port, mapping.targetPort]) {
      if (!Number.isInteger(value) || value < 1 || value > 65535) {
        problems.push({
          field: '--port',
          message: `${value} is not an integer from 1 through 65535`,
        });
      }
    }
    if (seenPorts.has(mapping.port)) {
      problems.push({
        field: '--port',
        message: `service port ${mapping.port} is given more than once`,
      });
    }
    seenPorts.add(mapping.port);
  }

  const limits: Record<string, string> = {};
  for (const [flag, key, value] of [
    ['--cpu', 'cpu', opts.cpu],
    ['--memory', 'memory', opts.memory],
  ] as const) {
    if (value !== undefined) {
      const problem = checkQuantity(flag, value);
      if (problem === undefined) {
        limits[key] = value;
      } else {
        problems.push(problem);
      }
    }
  }

  const containers: Record<string, unknown>[] = [];
  const addContainer = (name: string, ref: string | undefined, flag: string): void => {
    const container: Record<string, unknown> = { name };
    if (ref !== undefined) {
      const result = checkClusterImage(ref, flag);
      if (result.ok) {
        container.image = result.image;
      } else {
        problems.push(result.problem);
      }
    }
    if (Object.keys(limits).length > 0) {
      container.resources = { limits: { ...limits } };
    }
    containers.push(container);
  };
  if (opts.images.named.size > 0) {
    for (const [name, ref] of opts.images.named) {
      addContainer(name, ref, '--image');
    }
  } else {
    addContainer(opts.name, opts.images.bare, '--image');
  }

  if (opts.service === true && containers.length !== 1) {
    problems.push({
      field: '--service',
      message: `needs exactly one container in the built-in manifest, but --image defines ${containers.length}; use --file with your own Service`,
    });
  }
  if (problems.length > 0) {
    throw invalidArgument(problems);
  }

  const labels = { [APP_NAME_LABEL]: opts.name };
  const servicePorts =
    ports.length > 0 ? ports : [{ port: DEFAULT_SERVICE_PORT, targetPort: DEFAULT_TARGET_PORT }];
  const first = containers[0];
  if (opts.service === true && first !== undefined) {
    // Probed every second (kubelet's default is 10 s): a new Pod joins its Service's backends
    // about a second after it listens, so a surge rollout hands over within seconds.
    first.readinessProbe =
      ports.length > 0
        ? { tcpSocket: { port: servicePorts[0]?.targetPort }, periodSeconds: 1 }
        : {
            httpGet: { scheme: 'HTTPS', path: '/healthz', port: DEFAULT_TARGET_PORT },
            periodSeconds: 1,
          };
  }

  const podSpec = {
    nodeSelector: { [NODEGROUP_SELECTOR_KEY]: opts.nodegroup },
    containers,
  };
  const daemonSet = {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: opts.name, namespace },
    spec: {
      selector: { matchLabels: { ...labels } },
      updateStrategy: builtInUpdateStrategy(podSpec),
      template: {
        metadata: { labels: { ...labels } },
        spec: podSpec,
      },
    },
  };
  const documents = [stringifyOrdered(daemonSet)];
  if (opts.service === true) {
    documents.push(
      stringifyOrdered({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: opts.name, namespace },
        spec: {
          selector: { ...labels },
          ports: servicePorts.map(({ port, targetPort }) => ({
            port,
            targetPort,
            protocol: 'TCP',
          })),
        },
      }),
    );
  }
  return documents.join('---\n');
}
