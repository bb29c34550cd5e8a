import { isDnsLabel } from '@podmin/util-names';
import type { ProblemSink } from './checks';
import {
  checkKeys,
  childPath,
  describeType,
  entryPath,
  expectInteger,
  expectList,
  expectRecord,
} from './checks';
import { compareQuantities, quantityKindOf, quantityProblem } from './quantity';

const PORT_FIELDS = ['containerPort', 'hostPort', 'hostIP', 'name', 'protocol'];
const PROTOCOLS = ['TCP', 'UDP', 'SCTP'];
const PROBES = ['livenessProbe', 'readinessProbe', 'startupProbe'];
const LIFECYCLE_HOOKS = ['postStart', 'preStop'];
const RESOURCE_FIELDS = ['limits', 'requests', 'claims'];
const PORT_NAME_RULE =
  'a port name is at most 15 lowercase letters, digits and "-", with at least one letter, starting and ending with a letter or digit and no "--"';

/** True for an IANA service name, the form of a named container port. */
function isPortName(value: string): boolean {
  return isDnsLabel(value, 15) && /[a-z]/.test(value) && !value.includes('--');
}

/**
 * Checks what kubelet would refuse in one container: port numbers and names, probe and
 * lifecycle handler ports, and resource quantities.
 */
export function checkContainerDetails(
  container: Record<string, unknown>,
  path: string,
  sink: ProblemSink,
): void {
  if (container.ports !== undefined) checkPorts(container.ports, childPath(path, 'ports'), sink);
  for (const probe of PROBES) {
    if (container[probe] !== undefined) {
      checkHandler(container[probe], childPath(path, probe), sink, true);
    }
  }
  if (container.lifecycle !== undefined) {
    const lifecycle = expectRecord(container.lifecycle, childPath(path, 'lifecycle'), sink);
    for (const hook of LIFECYCLE_HOOKS) {
      if (lifecycle?.[hook] !== undefined) {
        checkHandler(lifecycle[hook], childPath(childPath(path, 'lifecycle'), hook), sink, false);
      }
    }
  }
  if (container.resources !== undefined) {
    checkResources(container.resources, childPath(path, 'resources'), sink);
  }
}

function checkPorts(value: unknown, path: string, sink: ProblemSink): void {
  const seen = new Map<string, string>();
  expectList(value, path, sink)?.forEach((item, index) => {
    const itemPath = `${path}[${index}]`;
    const port = expectRecord(item, itemPath, sink);
    if (port === undefined) return;
    checkKeys(
      port,
      PORT_FIELDS,
      itemPath,
      sink,
      `is not a Kubernetes v1 ContainerPort field; allowed fields are: ${PORT_FIELDS.join(', ')}`,
    );
    if (port.containerPort === undefined) {
      sink.add(
        childPath(itemPath, 'containerPort'),
        'is required: an integer from 1 through 65535',
      );
    } else {
      expectInteger(port.containerPort, childPath(itemPath, 'containerPort'), sink, 1, 65535);
    }
    // hostPort 0 means "no host port", as in Kubernetes.
    if (port.hostPort !== undefined && port.hostPort !== 0) {
      expectInteger(port.hostPort, childPath(itemPath, 'hostPort'), sink, 1, 65535);
    }
    if (
      port.protocol !== undefined &&
      (typeof port.protocol !== 'string' || !PROTOCOLS.includes(port.protocol))
    ) {
      sink.add(childPath(itemPath, 'protocol'), `must be one of ${PROTOCOLS.join(', ')}`);
    }
    if (port.name !== undefined) {
      const namePath = childPath(itemPath, 'name');
      if (typeof port.name !== 'string' || !isPortName(port.name)) {
        sink.add(namePath, `${describeValue(port.name)} is invalid; ${PORT_NAME_RULE}`);
      } else if (seen.has(port.name)) {
        sink.add(
          namePath,
          `"${port.name}" is already used by ${seen.get(port.name) ?? ''}; port names must be unique in a container`,
        );
      } else {
        seen.set(port.name, itemPath);
      }
    }
  });
}

/** A probe (`probe` true) or lifecycle handler: httpGet and tcpSocket ports, and grpc ports for probes. */
function checkHandler(value: unknown, path: string, sink: ProblemSink, probe: boolean): void {
  const handler = expectRecord(value, path, sink);
  if (handler === undefined) return;
  for (const action of ['httpGet', 'tcpSocket']) {
    if (handler[action] === undefined) continue;
    const actionPath = childPath(path, action);
    const target = expectRecord(handler[action], actionPath, sink);
    if (target === undefined) continue;
    checkNamedOrNumberPort(target.port, childPath(actionPath, 'port'), sink);
  }
  if (probe && handler.grpc !== undefined) {
    const grpcPath = childPath(path, 'grpc');
    const grpc = expectRecord(handler.grpc, grpcPath, sink);
    if (grpc !== undefined) {
      if (grpc.port === undefined) {
        sink.add(childPath(grpcPath, 'port'), 'is required: an integer from 1 through 65535');
      } else {
        expectInteger(grpc.port, childPath(grpcPath, 'port'), sink, 1, 65535);
      }
    }
  }
}

function checkNamedOrNumberPort(value: unknown, path: string, sink: ProblemSink): void {
  if (value === undefined) {
    sink.add(path, 'is required: an integer from 1 through 65535, or a named container port');
  } else if (typeof value === 'string') {
    if (!isPortName(value)) {
      sink.add(
        path,
        `${describeValue(value)} is not a port name; use an integer from 1 through 65535, or the name of a container port (${PORT_NAME_RULE})`,
      );
    }
  } else if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 65535) {
    sink.add(
      path,
      `must be an integer from 1 through 65535 or a named container port, not ${describeType(value)}`,
    );
  }
}

function describeValue(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : describeType(value);
}

/** Checks `resources` (of a container, or of the Pod) as kubelet would: quantities, and requests within limits. */
export function checkResources(value: unknown, path: string, sink: ProblemSink): void {
  const resources = expectRecord(value, path, sink);
  if (resources === undefined) return;
  checkKeys(
    resources,
    RESOURCE_FIELDS,
    path,
    sink,
    `is not a Kubernetes v1 ResourceRequirements field; allowed fields are: ${RESOURCE_FIELDS.join(', ')}`,
  );
  const valid: Partial<Record<'limits' | 'requests', Map<string, string>>> = {};
  for (const field of ['limits', 'requests'] as const) {
    if (resources[field] === undefined) continue;
    const mapPath = childPath(path, field);
    const map = expectRecord(resources[field], mapPath, sink);
    if (map === undefined) continue;
    const quantities = new Map<string, string>();
    for (const [name, raw] of Object.entries(map)) {
      const itemPath =
        name.includes('.') || name.includes('/')
          ? entryPath(mapPath, name)
          : childPath(mapPath, name);
      // YAML numbers are quantities too (cpu: 1); String() gives their plain decimal form.
      const text =
        typeof raw === 'string' ? raw : typeof raw === 'number' ? String(raw) : undefined;
      if (text === undefined) {
        sink.add(
          itemPath,
          `must be a quantity such as 250m, 0.5 or 512Mi, not ${describeType(raw)}`,
        );
        continue;
      }
      const problem = quantityProblem(text, { kind: quantityKindOf(name), allowZero: true });
      if (problem === undefined) quantities.set(name, text);
      else sink.add(itemPath, problem);
    }
    valid[field] = quantities;
  }
  const { limits, requests } = valid;
  if (limits === undefined || requests === undefined) return;
  for (const [name, request] of requests) {
    const limit = limits.get(name);
    if (limit !== undefined && (compareQuantities(request, limit) ?? 0) > 0) {
      sink.add(
        childPath(childPath(path, 'requests'), name),
        `${JSON.stringify(request)} is more than limits.${name} ${JSON.stringify(limit)}; a request must not exceed its limit`,
      );
    }
  }
}
