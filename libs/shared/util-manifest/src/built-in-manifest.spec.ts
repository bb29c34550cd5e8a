import {
  assertInitImages,
  assertNoBuiltInOnlyFlags,
  builtInUpdateStrategy,
  renderBuiltInManifest,
} from './built-in-manifest';
import type { BuiltInOptions } from './built-in-manifest';
import { buildDeployment } from './deployment';
import { parseImageFlags, parsePortFlags } from './flags';
import { parseYamlStream } from './yaml';
import { captureError } from './__fixtures__/capture-error';

function options(overrides: Partial<BuiltInOptions> = {}): BuiltInOptions {
  return { name: 'app', nodegroup: 'workers', images: parseImageFlags(['hello:v1']), ...overrides };
}

describe('renderBuiltInManifest', () => {
  it('renders a minimal single-container DaemonSet', () => {
    expect(renderBuiltInManifest(options())).toBe(
      [
        'apiVersion: apps/v1',
        'kind: DaemonSet',
        'metadata:',
        '  name: app',
        '  namespace: default',
        'spec:',
        '  selector:',
        '    matchLabels:',
        '      app.kubernetes.io/name: app',
        '  updateStrategy:',
        '    type: RollingUpdate',
        '    rollingUpdate:',
        '      maxSurge: 1',
        '      maxUnavailable: 0',
        '  template:',
        '    metadata:',
        '      labels:',
        '        app.kubernetes.io/name: app',
        '    spec:',
        '      nodeSelector:',
        '        podmin.dev/nodegroup: workers',
        '      containers:',
        '        - name: app',
        '          image: registry.podmin.internal/apps/hello:v1',
        '',
      ].join('\n'),
    );
  });

  it('is accepted by buildDeployment with the same name and nodegroup', () => {
    const deployment = buildDeployment(renderBuiltInManifest(options({ namespace: 'product' })), {
      source: 'built-in',
      name: 'app',
      nodegroup: 'workers',
    });
    expect(deployment).toMatchObject({ name: 'app', namespace: 'product', nodegroup: 'workers' });
    expect(deployment.service).toBeUndefined();
  });

  it('writes a zero-downtime strategy that reaches the Pod payload', () => {
    for (const opts of [
      options(),
      options({ service: true }),
      options({ service: true, ports: parsePortFlags(['80:8080']) }),
    ]) {
      const deployment = buildDeployment(renderBuiltInManifest(opts), { source: 'built-in' });
      expect(deployment.strategy).toEqual({
        type: 'RollingUpdate',
        maxUnavailable: 0,
        maxSurge: 1,
        minReadySeconds: 0,
        progressDeadlineSeconds: 300,
      });
      expect(deployment.pod.metadata).toMatchObject({
        annotations: {
          'podmin.dev/rollout':
            '{"type":"RollingUpdate","maxUnavailable":0,"maxSurge":1,"minReadySeconds":0,"progressDeadlineSeconds":300}',
        },
      });
    }
  });

  it('creates one container per named image in order, with limits on each', () => {
    const text = renderBuiltInManifest(
      options({
        namespace: 'product',
        images: parseImageFlags([
          'web=registry.podmin.internal/apps/example/web:v1',
          'sidecar=registry.podmin.internal/apps/example/sidecar:v1',
        ]),
        cpu: '250m',
        memory: '512Mi',
      }),
    );
    const [daemonSet] = parseYamlStream(text, 'built-in');
    expect(daemonSet).toMatchObject({
      metadata: { name: 'app', namespace: 'product' },
      spec: {
        template: {
          spec: {
            containers: [
              {
                name: 'web',
                image: 'registry.podmin.internal/apps/example/web:v1',
                resources: { limits: { cpu: '250m', memory: '512Mi' } },
              },
              {
                name: 'sidecar',
                image: 'registry.podmin.internal/apps/example/sidecar:v1',
                resources: { limits: { cpu: '250m', memory: '512Mi' } },
              },
            ],
          },
        },
      },
    });
    expect(buildDeployment(text, { source: 'built-in' }).name).toBe('app');
  });

  it('renders containers without images when none are given, which deploy then rejects', () => {
    const text = renderBuiltInManifest(options({ images: { named: new Map() } }));
    expect(text).not.toContain('image:');
    const err = captureError(() => buildDeployment(text, { source: 'built-in' }));
    expect(err.code).toBe('INVALID_MANIFEST');
    expect(err.message).toContain('DaemonSet spec.template.spec.containers[0].image');
    expect(err.message).toContain('every container needs an image');
    expect(
      buildDeployment(text, { source: 'built-in', images: parseImageFlags(['hello']) }).podYaml,
    ).toContain('registry.podmin.internal/apps/hello');
  });

  it('adds the default HTTPS Service and readiness probe with --service', () => {
    const text = renderBuiltInManifest(options({ service: true }));
    const [daemonSet, service] = parseYamlStream(text, 'built-in');
    expect(text).toContain('\n---\napiVersion: v1\nkind: Service\n');
    expect(daemonSet).toMatchObject({
      spec: {
        template: {
          spec: {
            containers: [
              {
                readinessProbe: {
                  httpGet: { scheme: 'HTTPS', path: '/healthz', port: 8443 },
                  periodSeconds: 1,
                },
              },
            ],
          },
        },
      },
    });
    expect(service).toEqual({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'app', namespace: 'default' },
      spec: {
        selector: { 'app.kubernetes.io/name': 'app' },
        ports: [{ port: 443, targetPort: 8443, protocol: 'TCP' }],
      },
    });
    const deployment = buildDeployment(text, { source: 'built-in', requireService: true });
    expect(deployment.service?.name).toBe('app');
    expect(deployment.pod.metadata).toMatchObject({ annotations: { 'podmin.dev/service': 'app' } });
  });

  it('replaces the default ports and probes the first target port over TCP', () => {
    const text = renderBuiltInManifest(
      options({ service: true, ports: parsePortFlags(['80:8080,53:5353']) }),
    );
    const [daemonSet, service] = parseYamlStream(text, 'built-in');
    expect(daemonSet).toMatchObject({
      spec: {
        template: {
          spec: {
            containers: [{ readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 } }],
          },
        },
      },
    });
    expect(service).toMatchObject({
      spec: {
        ports: [
          { port: 80, targetPort: 8080, protocol: 'TCP' },
          { port: 53, targetPort: 5353, protocol: 'TCP' },
        ],
      },
    });
    expect(buildDeployment(text, { source: 'built-in' }).service?.object.spec).toMatchObject({
      ports: [
        { port: 80, targetPort: 8080, protocol: 'TCP' },
        { port: 53, targetPort: 5353, protocol: 'TCP' },
      ],
    });
  });

  it('uses the default Service when ports is empty', () => {
    expect(renderBuiltInManifest(options({ service: true, ports: [] }))).toContain('port: 443');
  });

  it('is deterministic', () => {
    const opts = options({ service: true, cpu: '1', memory: '1Gi' });
    expect(renderBuiltInManifest(opts)).toBe(renderBuiltInManifest(opts));
  });

  it.each<[string, Partial<BuiltInOptions>, string, string]>([
    [
      'ports without service',
      { ports: [{ port: 80, targetPort: 8080 }] },
      '--port',
      'requires --service',
    ],
    [
      'service with several containers',
      { service: true, images: parseImageFlags(['a=x', 'b=y']) },
      '--service',
      'needs exactly one container',
    ],
    ['invalid name', { name: 'App' }, '<name>', 'DNS-1123 label'],
    ['invalid nodegroup', { nodegroup: 'a_b' }, '--nodegroup', 'DNS-1123 label'],
    ['invalid namespace', { namespace: 'A' }, '--namespace', 'DNS-1123 label'],
    ['reserved namespace', { namespace: '_system' }, '--namespace', 'is reserved'],
    ['zero cpu', { cpu: '0' }, '--cpu', 'positive Kubernetes quantity'],
    ['negative memory', { memory: '-1Gi' }, '--memory', 'positive Kubernetes quantity'],
    [
      'foreign image',
      { images: parseImageFlags(['docker.io/library/nginx:1.27']) },
      '--image',
      'podmin push',
    ],
    [
      'foreign named image',
      { images: parseImageFlags(['web=ghcr.io/x/y']) },
      '--image',
      'podmin push ghcr.io/x/y',
    ],
    [
      'mixed images',
      { images: { bare: 'a', named: new Map([['b', 'c']]) } },
      '--image',
      'cannot combine',
    ],
    [
      'out-of-range port',
      { service: true, ports: [{ port: 0, targetPort: 80 }] },
      '--port',
      '1 through 65535',
    ],
    [
      'duplicate port',
      {
        service: true,
        ports: [
          { port: 80, targetPort: 80 },
          { port: 80, targetPort: 81 },
        ],
      },
      '--port',
      'more than once',
    ],
  ])('rejects %s naming the flag', (_title, overrides, field, message) => {
    const err = captureError(() => renderBuiltInManifest(options(overrides)));
    expect(err.code).toBe('INVALID_ARGUMENT');
    const problem = err.problems.find((p) => p.field === field);
    expect(problem?.message).toContain(message);
  });
});

describe('builtInUpdateStrategy', () => {
  const container = (ports?: unknown[]) => ({
    name: 'app',
    image: 'hello:v1',
    ...(ports ? { ports } : {}),
  });
  const surge = { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } };
  const replace = { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 1 } };

  it('surges unless the Pod binds host ports or the host network', () => {
    expect(builtInUpdateStrategy({ containers: [container()] })).toEqual(surge);
    expect(builtInUpdateStrategy({ containers: [container([{ containerPort: 80 }])] })).toEqual(
      surge,
    );
    expect(
      builtInUpdateStrategy({ containers: [container([{ containerPort: 80, hostPort: 0 }])] }),
    ).toEqual(surge);
    expect(builtInUpdateStrategy({ hostNetwork: false, containers: [container()] })).toEqual(surge);
    expect(
      builtInUpdateStrategy({ containers: [container([{ containerPort: 80, hostPort: 80 }])] }),
    ).toEqual(replace);
    expect(
      builtInUpdateStrategy({
        containers: [container()],
        initContainers: [container([{ containerPort: 9, hostPort: 9 }])],
      }),
    ).toEqual(replace);
    expect(builtInUpdateStrategy({ hostNetwork: true, containers: [container()] })).toEqual(
      replace,
    );
  });

  it('is accepted by buildDeployment in both forms', () => {
    const text = (updateStrategy: unknown, spec: Record<string, unknown>) =>
      JSON.stringify({
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: { name: 'app' },
        spec: {
          selector: { matchLabels: { app: 'x' } },
          updateStrategy,
          template: {
            metadata: { labels: { app: 'x' } },
            spec: { nodeSelector: { 'podmin.dev/nodegroup': 'workers' }, ...spec },
          },
        },
      });
    const hostPort = { containers: [container([{ containerPort: 80, hostPort: 80 }])] };
    const plain = { containers: [container()] };
    for (const spec of [hostPort, plain]) {
      expect(buildDeployment(text(builtInUpdateStrategy(spec), spec), { source: 'x' }).name).toBe(
        'app',
      );
    }
    // The surging form is exactly what a host port cannot have.
    expect(() => buildDeployment(text(surge, hostPort), { source: 'x' })).toThrow(
      /set maxSurge to 0/,
    );
  });
});

describe('assertInitImages', () => {
  it('requires at least one --image', () => {
    const err = captureError(() => assertInitImages({ named: new Map() }));
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect(err.problems[0]?.field).toBe('--image');
    expect(() => assertInitImages(parseImageFlags(['x']))).not.toThrow();
    expect(() => assertInitImages(parseImageFlags(['a=x']))).not.toThrow();
  });
});

describe('assertNoBuiltInOnlyFlags', () => {
  it('accepts no built-in-only flags', () => {
    expect(() => assertNoBuiltInOnlyFlags({})).not.toThrow();
    expect(() => assertNoBuiltInOnlyFlags({ ports: [] })).not.toThrow();
  });

  it('names each flag given with --file', () => {
    const err = captureError(() =>
      assertNoBuiltInOnlyFlags({ cpu: '1', memory: '1Gi', ports: ['80:8080'] }),
    );
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect(err.problems.map((p) => p.field)).toEqual(['--port', '--cpu', '--memory']);
    expect(err.message).toContain('cannot be used with --file');
  });
});
