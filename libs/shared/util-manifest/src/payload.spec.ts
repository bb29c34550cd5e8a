import { hasCode } from '@podmin/util-errors';
import { buildDeployment } from './deployment';
import { parsePodPayload, parseServicePayload } from './payload';
import { stringifyCanonical } from './yaml';
import { minimalDaemonSet } from './__fixtures__/daemonset';

const MANIFEST = `${minimalDaemonSet({
  name: 'web',
  container: 'app',
  namespace: 'product',
  podSpec: { volumes: [{ name: 'data', emptyDir: {} }] },
})}---
${stringifyCanonical({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'frontend', namespace: 'product' },
  spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] },
})}`;

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

  describe('rollout annotations', () => {
    const pod = d.pod as { spec: Record<string, unknown>; metadata: Record<string, unknown> };
    const withAnnotations = (annotations: Record<string, string>, spec = pod.spec): string =>
      JSON.stringify({ ...pod, metadata: { ...pod.metadata, annotations }, spec });
    const SURGE =
      '{"type":"RollingUpdate","maxUnavailable":0,"maxSurge":1,"minReadySeconds":0,"progressDeadlineSeconds":300}';

    it('accepts the strategy buildDeployment writes, podmin.dev/restartedAt, and none', () => {
      expect(d.pod.metadata).toMatchObject({
        annotations: {
          'podmin.dev/rollout': expect.stringContaining('"RollingUpdate"') as unknown,
        },
      });
      const restarted = withAnnotations({
        'podmin.dev/rollout': SURGE,
        'podmin.dev/restartedAt': '2025-01-02T03:04:05Z',
      });
      expect(parsePodPayload(restarted, 'p').pod.metadata).toMatchObject({
        annotations: { 'podmin.dev/restartedAt': '2025-01-02T03:04:05Z' },
      });
      // Payloads committed before rollouts existed carry no strategy.
      expect(parsePodPayload(withAnnotations({}), 'p').name).toBe('web');
    });

    it.each([
      ['not JSON', 'not JSON'],
      ['{"type":"Recreate"}', 'type must be RollingUpdate or OnDelete'],
      [SURGE.replace('"maxSurge":1', '"maxSurge":"150%"'), 'maxSurge must be an integer'],
      [SURGE.replace('}', ',"paused":true}'), 'unknown field paused'],
    ])('refuses the malformed strategy %j', (value, why) => {
      expect(
        problemsOf(() => parsePodPayload(withAnnotations({ 'podmin.dev/rollout': value }), 'p')),
      ).toContain(
        `Pod metadata.annotations["podmin.dev/rollout"]: is not a rollout strategy podmin writes: reading annotation podmin.dev/rollout: ${why}`,
      );
    });

    it('refuses host ports and the host network with a surging strategy', () => {
      const spec = {
        ...pod.spec,
        hostNetwork: true,
        containers: [
          {
            name: 'app',
            image: 'registry.podmin.internal/apps/hello:v1',
            ports: [{ containerPort: 80, hostPort: 80 }],
          },
        ],
      };
      const message = problemsOf(() =>
        parsePodPayload(withAnnotations({ 'podmin.dev/rollout': SURGE }, spec), 'p'),
      );
      expect(message).toContain(
        "Pod spec.hostNetwork: cannot be used with a surging rollout (podmin.dev/rollout maxSurge 1): the old and the new Pod would both need the node's ports",
      );
      expect(message).toContain(
        'Pod spec.containers[0].ports[0].hostPort: cannot be used with a surging rollout',
      );
      const replaced = SURGE.replace(
        '"maxUnavailable":0,"maxSurge":1',
        '"maxUnavailable":1,"maxSurge":0',
      );
      expect(
        parsePodPayload(withAnnotations({ 'podmin.dev/rollout': replaced }, spec), 'p').name,
      ).toBe('web');
      expect(parsePodPayload(withAnnotations({}, spec), 'p').name).toBe('web');
    });
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
