import { RESERVED_NAMESPACE } from './constants';
import type { ProblemSink } from './checks';
import {
  checkKeys,
  childPath,
  describeType,
  entryPath,
  expectDnsLabel,
  expectInteger,
  expectList,
  expectRecord,
  expectStringMap,
} from './checks';

/** A validated Service with defaults filled in (namespace, protocol, targetPort). */
export interface CheckedService {
  name: string;
  namespace: string;
  object: Record<string, unknown>;
  /** Findings that do not stop a deploy (a selector matching no Pod of its own DaemonSet). */
  warnings: string[];
}

// DESIGN §6.11: exactly the spec's subset; even `type: ClusterIP` and port names are refused
// rather than accepted and ignored.
const SERVICE_SUBSET =
  'podmin supports only Service metadata.name, metadata.namespace, spec.selector and spec.ports';

/** Validates a namespace value: a DNS-1123 label that is not the reserved `_system`. */
export function checkNamespace(
  value: unknown,
  path: string,
  sink: ProblemSink,
): string | undefined {
  if (value === RESERVED_NAMESPACE) {
    sink.add(
      path,
      `"${RESERVED_NAMESPACE}" is reserved for podmin system secrets and is never a valid namespace; choose another namespace`,
    );
    return undefined;
  }
  return expectDnsLabel(value, path, sink);
}

/**
 * Checks an object's optional `metadata.namespace`, `metadata.labels` and
 * `metadata.annotations` (the keys every podmin kind accepts beside its name); returns the
 * namespace and annotations when they are valid.
 */
export function checkObjectMeta(
  metadata: Record<string, unknown>,
  sink: ProblemSink,
): { namespace?: string; annotations?: Record<string, string> } {
  const out: { namespace?: string; annotations?: Record<string, string> } = {};
  if (metadata.namespace !== undefined) {
    const namespace = checkNamespace(metadata.namespace, 'metadata.namespace', sink);
    if (namespace !== undefined) out.namespace = namespace;
  }
  if (metadata.labels !== undefined) {
    expectStringMap(metadata.labels, 'metadata.labels', sink, 'labels');
  }
  if (metadata.annotations !== undefined) {
    const annotations = expectStringMap(
      metadata.annotations,
      'metadata.annotations',
      sink,
      'annotations',
    );
    if (annotations !== undefined) out.annotations = annotations;
  }
  return out;
}

/** Reports each selector entry that the Pod template labels do not carry. */
export function checkSelectorSubset(
  selector: Record<string, string>,
  templateLabels: Record<string, string> | undefined,
  path: string,
  sink: ProblemSink,
  what: string,
): void {
  for (const [key, value] of Object.entries(selector)) {
    if (templateLabels?.[key] !== value) {
      sink.add(
        entryPath(path, key),
        `${what}: spec.template.metadata.labels must contain ${key}: "${value}" (the selector must be a subset of the Pod template labels)`,
      );
    }
  }
}

/**
 * Validates the supported Service subset against its DaemonSet: same namespace, a selector
 * matching the Pod template labels, integer TCP/UDP ports with optional integer targetPort.
 */
export function checkService(
  service: Record<string, unknown>,
  daemonSetNamespace: string | undefined,
  templateLabels: Record<string, string> | undefined,
  sink: ProblemSink,
): CheckedService | undefined {
  const warnings: string[] = [];
  checkKeys(
    service,
    ['apiVersion', 'kind', 'metadata', 'spec'],
    '',
    sink,
    `is not supported; ${SERVICE_SUBSET}`,
  );

  let name: string | undefined;
  let namespace: string | undefined = 'default';
  const metadata =
    service.metadata === undefined
      ? (sink.add('metadata', 'is required; it must contain name'), undefined)
      : expectRecord(service.metadata, 'metadata', sink);
  if (metadata !== undefined) {
    checkKeys(
      metadata,
      ['name', 'namespace'],
      'metadata',
      sink,
      `is not supported; ${SERVICE_SUBSET}`,
    );
    name =
      metadata.name === undefined
        ? (sink.add('metadata.name', 'is required: a DNS-1123 label naming the Service'), undefined)
        : expectDnsLabel(metadata.name, 'metadata.name', sink);
    if (metadata.namespace !== undefined) {
      namespace = checkNamespace(metadata.namespace, 'metadata.namespace', sink);
    }
    if (
      namespace !== undefined &&
      daemonSetNamespace !== undefined &&
      namespace !== daemonSetNamespace
    ) {
      sink.add(
        'metadata.namespace',
        `is "${namespace}"${metadata.namespace === undefined ? ' (the default)' : ''} but the DaemonSet's namespace is "${daemonSetNamespace}"; a Service must be in its DaemonSet's namespace`,
      );
    }
  }

  const spec =
    service.spec === undefined
      ? (sink.add('spec', 'is required; it must contain selector and ports'), undefined)
      : expectRecord(service.spec, 'spec', sink);
  let selector: Record<string, string> | undefined;
  let ports: Record<string, unknown>[] | undefined;
  if (spec !== undefined) {
    checkKeys(spec, ['selector', 'ports'], 'spec', sink, `is not supported; ${SERVICE_SUBSET}`);
    selector = checkServiceSelector(spec.selector, sink);
    if (selector !== undefined && templateLabels !== undefined) {
      // Endpoints are chosen by namespace and selector across every deployment, so a Service
      // may deliberately select other deployments' Pods (blue/green): a warning, not an error.
      const missing = Object.entries(selector).filter(([k, v]) => templateLabels[k] !== v);
      if (missing.length > 0)
        warnings.push(
          `Service spec.selector selects no Pod of this DaemonSet (spec.template.metadata.labels lack ${missing
            .map(([k, v]) => `${k}: "${v}"`)
            .join(', ')}); it will select only other deployments' Pods in its namespace`,
        );
    }
    ports = checkPorts(spec.ports, sink);
  }

  if (
    name === undefined ||
    namespace === undefined ||
    selector === undefined ||
    ports === undefined
  ) {
    return undefined;
  }
  return {
    name,
    namespace,
    object: {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace },
      spec: { selector, ports },
    },
    warnings,
  };
}

function checkServiceSelector(
  value: unknown,
  sink: ProblemSink,
): Record<string, string> | undefined {
  const path = 'spec.selector';
  if (value === undefined) {
    sink.add(path, 'is required: a non-empty map of labels selecting the DaemonSet Pods');
    return undefined;
  }
  const selector = expectStringMap(value, path, sink, 'selector');
  if (selector === undefined) {
    return undefined;
  }
  if (Object.keys(selector).length === 0) {
    sink.add(path, 'must not be empty: a Service selects Pods by at least one label');
    return undefined;
  }
  return selector;
}

function checkPorts(value: unknown, sink: ProblemSink): Record<string, unknown>[] | undefined {
  const path = 'spec.ports';
  if (value === undefined) {
    sink.add(path, 'is required: a non-empty list of {port, targetPort?, protocol?}');
    return undefined;
  }
  const items = expectList(value, path, sink);
  if (items === undefined) {
    return undefined;
  }
  if (items.length === 0) {
    sink.add(path, 'must list at least one port');
    return undefined;
  }
  const out: Record<string, unknown>[] = [];
  const pairs = new Map<string, string>();
  let valid = true;
  items.forEach((item, index) => {
    const itemPath = `${path}[${index}]`;
    const port = expectRecord(item, itemPath, sink);
    if (port === undefined) {
      valid = false;
      return;
    }
    if (port.name !== undefined) {
      sink.add(
        childPath(itemPath, 'name'),
        'is not supported: podmin has no named ports; remove name and refer to the port by number',
      );
    }
    checkKeys(
      port,
      ['port', 'targetPort', 'protocol', 'name'],
      itemPath,
      sink,
      'is not supported; a Service port has only port, targetPort and protocol',
    );
    const number = expectInteger(port.port, childPath(itemPath, 'port'), sink, 1, 65535);
    let targetPort: number | undefined = number;
    if (typeof port.targetPort === 'string') {
      sink.add(
        childPath(itemPath, 'targetPort'),
        `named target port "${port.targetPort}" is not supported; use an integer from 1 through 65535`,
      );
      targetPort = undefined;
    } else if (port.targetPort !== undefined) {
      targetPort = expectInteger(
        port.targetPort,
        childPath(itemPath, 'targetPort'),
        sink,
        1,
        65535,
      );
    }
    const protocol = port.protocol ?? 'TCP';
    if (protocol !== 'TCP' && protocol !== 'UDP') {
      sink.add(
        childPath(itemPath, 'protocol'),
        `${describeType(protocol)} is not supported; use TCP or UDP`,
      );
      valid = false;
      return;
    }
    if (number === undefined || targetPort === undefined) {
      valid = false;
      return;
    }
    const pair = `${protocol}/${number}`;
    const other = pairs.get(pair);
    if (other !== undefined) {
      sink.add(
        itemPath,
        `${pair} is already used by ${other}; each protocol/port pair must be unique`,
      );
      valid = false;
      return;
    }
    pairs.set(pair, itemPath);
    out.push({ port: number, protocol, targetPort });
  });
  return valid ? out : undefined;
}
