import { hasCode } from '@podmin/util-errors';
import { buildDeployment } from './deployment';
import { parsePodPayload, parseServicePayload } from './payload';

const MANIFEST = `apiVersion: apps/v1
kind: DaemonSet
metadata: { name: web, namespace: product }
spec:
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec:
      nodeSelector: { podmin.dev/nodegroup: workers }
      containers: [{ name: app, image: hello:v1 }]
      volumes: [{ name: data, emptyDir: {} }]
---
apiVersion: v1
kind: Service
metadata: { name: frontend, namespace: product }
spec:
  selector: { app: web }
  ports: [{ port: 80, targetPort: 8080 }]
`;

function problemsOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(hasCode(err, 'INVALID_MANIFEST')).toBe(true);
    return String(err);
  }
  throw new Error('expected a validation error');
}

describe('payload parsers', () => {
  const d = buildDeployment(MANIFEST, { source: 'app.yaml' });

  it('accepts exactly what buildDeployment emits', () => {
    expect(parsePodPayload(d.podYaml, 'pod.yaml')).toEqual({
      name: 'web',
      namespace: 'product',
      pod: d.pod,
    });
    expect(parseServicePayload(d.service!.yaml, 'svc.yaml')).toEqual({
      name: 'frontend',
      namespace: 'product',
      object: d.service!.object,
    });
  });

  it('applies the strict YAML rules: duplicate keys, anchors and extra documents', () => {
    expect(problemsOf(() => parsePodPayload(`${d.podYaml}kind: Pod\n`, 'p.yaml'))).toMatch(
      /p\.yaml:\d+: duplicate map key/,
    );
    expect(problemsOf(() => parsePodPayload(`${d.podYaml}---\n${d.podYaml}`, 'p.yaml'))).toContain(
      'holds 2 YAML documents',
    );
    expect(problemsOf(() => parsePodPayload('a: &x 1\nb: *x\n', 'p.yaml'))).toContain('alias');
    expect(problemsOf(() => parsePodPayload('[]\n', 'p.yaml'))).toContain('not a mapping');
  });

  it('rejects Pods podmin never writes', () => {
    const pod = d.pod as { spec: Record<string, unknown>; metadata: Record<string, unknown> };
    const withSelector = { ...pod, spec: { ...pod.spec, nodeSelector: { a: 'b' } } };
    expect(problemsOf(() => parsePodPayload(JSON.stringify(withSelector), 'p'))).toContain(
      'Pod spec.nodeSelector: is never part of a podmin Pod payload',
    );
    const typo = { ...pod, spec: { ...pod.spec, contianers: [] } };
    expect(problemsOf(() => parsePodPayload(JSON.stringify(typo), 'p'))).toContain(
      'Pod spec.contianers: is not a Kubernetes v1 PodSpec field',
    );
    const noImage = { ...pod, spec: { containers: [{ name: 'app' }] } };
    expect(problemsOf(() => parsePodPayload(JSON.stringify(noImage), 'p'))).toContain(
      'Pod spec.containers[0].image: must be a non-empty image reference',
    );
    expect(
      problemsOf(() => parsePodPayload(JSON.stringify({ ...pod, kind: 'Deployment' }), 'p')),
    ).toContain('must be apiVersion v1 with kind Pod');
    const badName = { ...pod, metadata: { name: 'Web_1' } };
    expect(problemsOf(() => parsePodPayload(JSON.stringify(badName), 'p'))).toContain(
      'Pod metadata.name',
    );
  });

  it('validates Services with the manifest subset rules', () => {
    const svc = d.service!.object as { spec: Record<string, unknown> };
    const nodePort = { ...svc, spec: { ...svc.spec, type: 'NodePort' } };
    expect(problemsOf(() => parseServicePayload(JSON.stringify(nodePort), 's'))).toContain(
      'Service spec.type',
    );
    expect(
      problemsOf(() => parseServicePayload(JSON.stringify({ ...svc, kind: 'Pod' }), 's')),
    ).toContain('must be apiVersion v1 with kind Service');
    expect(problemsOf(() => parseServicePayload(d.podYaml, 's'))).toContain('Service');
  });
});
