import fs from 'node:fs';
import path from 'node:path';
import { ValidationError } from '@podmin/util-errors';
import { buildDeployment } from './deployment';

// Issue 31: ten public DaemonSet manifests, each written from its upstream project's published
// manifest (the source is named at the top of each file), refused as published with the
// expected field paths, and accepted once adapted only as the spec requires.

const DIR = path.join(__dirname, '__fixtures__', 'real-manifests');
const read = (file: string): string => fs.readFileSync(path.join(DIR, file), 'utf8');

const POD = 'DaemonSet spec.template.spec';
const SELECTOR_MISSING = `${POD}.nodeSelector`;
const OS_SELECTOR = [`${POD}.nodeSelector["kubernetes.io/os"]`, `${POD}.nodeSelector`];

/** Per manifest: the fields its published form is refused for, in the order reported. */
const ORIGINAL_REFUSALS: Record<string, string[]> = {
  'node-exporter': [
    `${POD}.serviceAccountName`,
    `${POD}.automountServiceAccountToken`,
    ...OS_SELECTOR,
    `${POD}.containers[0].image`,
    `${POD}.containers[1].image`,
  ],
  'fluent-bit': [
    `${POD}.serviceAccountName`,
    `${POD}.volumes[0].configMap`,
    SELECTOR_MISSING,
    `${POD}.containers[0].image`,
  ],
  nginx: [
    `${POD}.imagePullSecrets`,
    `${POD}.volumes[0].configMap`,
    `${POD}.volumes[1].secret`,
    SELECTOR_MISSING,
    'Service spec.type',
    'Service spec.ports[0].name',
    'Service spec.ports[0].targetPort',
    'Service spec.ports[1].name',
    'Service spec.ports[1].targetPort',
  ],
  'datadog-agent': [
    'DaemonSet spec.template.metadata.name',
    `${POD}.serviceAccountName`,
    `${POD}.containers[0].env[0].valueFrom.secretKeyRef`,
    ...OS_SELECTOR,
    `${POD}.containers[0].image`,
    'Service metadata.labels',
    'Service spec.internalTrafficPolicy',
    'Service spec.ports[0].name',
    'Service spec.ports[1].name',
  ],
  promtail: [
    `${POD}.serviceAccountName`,
    `${POD}.volumes[0].secret`,
    SELECTOR_MISSING,
    `${POD}.containers[0].image`,
  ],
  // otel/opentelemetry-collector-k8s names no registry host, so it reads as a podmin shorthand
  // and passes validate; deploy's preflight finds it unpublished.
  'otel-collector': [
    `${POD}.serviceAccountName`,
    `${POD}.volumes[0].configMap`,
    SELECTOR_MISSING,
    'Service metadata.labels',
    'Service spec.type',
    'Service spec.internalTrafficPolicy',
    'Service spec.ports[0].name',
    'Service spec.ports[0].appProtocol',
    'Service spec.ports[1].name',
  ],
  'spire-agent': [
    'DaemonSet spec.template.metadata.namespace',
    `${POD}.serviceAccountName`,
    `${POD}.volumes[0].configMap`,
    `${POD}.volumes[1].configMap`,
    `${POD}.volumes[3].projected.sources[0].serviceAccountToken`,
    SELECTOR_MISSING,
    `${POD}.containers[0].image`,
    `${POD}.initContainers[0].image`,
  ],
  falco: [
    'DaemonSet spec.template.metadata.name',
    `${POD}.serviceAccountName`,
    `${POD}.volumes[5].configMap`,
    SELECTOR_MISSING,
    `${POD}.containers[0].image`,
  ],
  vector: [
    `${POD}.serviceAccountName`,
    `${POD}.volumes[0].projected.sources[0].configMap`,
    SELECTOR_MISSING,
    'Service metadata.labels',
    'Service spec.type',
    'Service spec.ports[0].name',
  ],
  'node-local-dns': [
    'node-local-dns.original.yaml:5',
    'node-local-dns.original.yaml:37',
    'node-local-dns.original.yaml:152',
    `${POD}.serviceAccountName`,
    `${POD}.volumes[1].configMap`,
    `${POD}.volumes[2].configMap`,
    `${POD}.dnsPolicy`,
    SELECTOR_MISSING,
    `${POD}.containers[0].image`,
    'Service metadata.labels',
    'Service spec.ports[0].name',
    'Service spec.ports[1].name',
  ],
};

function refusal(text: string, source: string): ValidationError {
  try {
    buildDeployment(text, { source });
  } catch (err) {
    if (err instanceof ValidationError) return err;
    throw err;
  }
  throw new Error(`${source} was accepted`);
}

describe('ten public DaemonSet manifests (issue 31)', () => {
  it('has an original and an adaptation for each of the ten, and nothing else', () => {
    const files = fs.readdirSync(DIR).sort();
    const names = Object.keys(ORIGINAL_REFUSALS).sort();
    expect(names).toHaveLength(10);
    expect(files).toEqual(
      names.flatMap((name) => [`${name}.adapted.yaml`, `${name}.original.yaml`]).sort(),
    );
    for (const file of files) expect(read(file)).toMatch(/^# (Source|Adapted from)/);
  });

  it.each(Object.entries(ORIGINAL_REFUSALS))(
    '%s as published is refused with the expected fields',
    (name, fields) => {
      const source = `${name}.original.yaml`;
      const err = refusal(read(source), source);
      expect(err.problems.map((p) => p.field)).toEqual(fields);
      // Fields a static Pod cannot honour say why and what to use instead.
      for (const problem of err.problems.filter((p) => p.message.startsWith('cannot be used'))) {
        expect(problem.message).toMatch(
          /(static Pods cannot refer to API objects|every podmin Pod resolves through the cluster DNS).*; instead, /,
        );
      }
    },
  );

  it.each(Object.keys(ORIGINAL_REFUSALS))('%s as adapted is accepted', (name) => {
    const source = `${name}.adapted.yaml`;
    const deployment = buildDeployment(read(source), { source, nodegroup: 'workers' });
    expect(deployment.nodegroup).toBe('workers');
    expect(deployment.warnings).toEqual([]);
  });
});
