import type { ValidationError } from '@podmin/util-errors';
import { buildDeployment } from './deployment';
import type { BuildOptions } from './deployment';
import { parseImageFlags } from './flags';
import { parseYamlStream, stringifyCanonical } from './yaml';
import { captureError } from './__fixtures__/capture-error';

const FULL_DAEMONSET = `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: web
  namespace: product
  labels:
    team: a
  annotations:
    example.com/owner: team-a
spec:
  selector:
    matchLabels:
      app: web
  updateStrategy:
    type: RollingUpdate
  minReadySeconds: 5
  revisionHistoryLimit: 3
  template:
    metadata:
      labels:
        app: web
        tier: front
      annotations:
        example.com/note: hello
        podmin.dev/aws-parameter-store: database-url,log-level
    spec:
      nodeSelector:
        podmin.dev/nodegroup: workers
      terminationGracePeriodSeconds: 10
      initContainers:
        - name: migrate
          image: example/migrate:v1
      containers:
        - name: web
          image: registry.podmin.internal/apps/example/web:v1
          imagePullPolicy: IfNotPresent
          ports:
            - containerPort: 8443
          volumeMounts:
            - name: data
              mountPath: /data
        - name: sidecar
          image: example/sidecar:v1
      volumes:
        - name: data
          emptyDir: {}
`;

const SERVICE = `apiVersion: v1
kind: Service
metadata:
  name: web-svc
  namespace: product
spec:
  selector:
    app: web
  ports:
    - port: 443
      targetPort: 8443
    - port: 53
      protocol: UDP
`;

const MINIMAL = `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: app
spec:
  selector:
    matchLabels:
      app.kubernetes.io/name: app
  template:
    metadata:
      labels:
        app.kubernetes.io/name: app
    spec:
      nodeSelector:
        podmin.dev/nodegroup: workers
      containers:
        - name: app
          image: hello:v1
`;

const MINIMAL_SERVICE = `apiVersion: v1
kind: Service
metadata:
  name: app
spec:
  selector:
    app.kubernetes.io/name: app
  ports:
    - port: 80
`;

type Path = string | readonly (string | number)[];
type Edit = readonly [Path, unknown];

function segments(path: Path): (string | number)[] {
  return typeof path === 'string'
    ? path.split('.').map((part) => (/^\d+$/.test(part) ? Number(part) : part))
    : [...path];
}

/** Applies edits (undefined deletes) to one document of a YAML stream and re-serialises it. */
function edit(text: string, edits: readonly Edit[], documentIndex = 0): string {
  const documents = parseYamlStream(text, 'fixture.yaml');
  for (const [path, value] of edits) {
    const parts = segments(path);
    const last = parts.pop()!;
    let node = documents[documentIndex] as Record<string | number, unknown>;
    for (const part of parts) {
      node[part] ??= {};
      node = node[part] as Record<string | number, unknown>;
    }
    if (value === undefined) {
      if (Array.isArray(node) && typeof last === 'number') {
        node.splice(last, 1);
      } else {
        delete node[last];
      }
    } else {
      node[last] = value;
    }
  }
  return documents.map((doc) => stringifyCanonical(doc)).join('---\n');
}

function build(text: string, opts: Partial<BuildOptions> = {}) {
  return buildDeployment(text, { source: 'app.yaml', ...opts });
}

function expectInvalid(text: string, opts: Partial<BuildOptions> = {}): ValidationError {
  const err = captureError(() => build(text, opts));
  expect(err.code).toBe('INVALID_MANIFEST');
  expect(err.message.startsWith('validating app.yaml')).toBe(true);
  return err;
}

function messageFor(err: ValidationError, field: string): string {
  const problem = err.problems.find((p) => p.field === field);
  if (problem === undefined) {
    throw new Error(`no problem for ${field}; got:\n${err.message}`);
  }
  expect(err.message).toContain(`${field}: ${problem.message}`);
  return problem.message;
}

/** The `podmin.dev/rollout` value of a DaemonSet that sets no strategy (Kubernetes' defaults). */
const DEFAULT_ROLLOUT =
  '{"type":"RollingUpdate","maxUnavailable":1,"maxSurge":0,"minReadySeconds":0,"progressDeadlineSeconds":300}';

const IDENTITY_MOUNT = {
  name: 'podmin-workload-identity',
  mountPath: '/var/run/secrets/podmin.dev/tls',
  readOnly: true,
};

describe('buildDeployment', () => {
  describe('extraction', () => {
    it('extracts the Pod and canonical Service from a full DaemonSet + Service stream', () => {
      const deployment = build(`${FULL_DAEMONSET}---\n${SERVICE}`, {
        name: 'web',
        nodegroup: 'workers',
      });
      expect(deployment.name).toBe('web');
      expect(deployment.namespace).toBe('product');
      expect(deployment.nodegroup).toBe('workers');
      expect(deployment.pod).toEqual({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: 'web',
          namespace: 'product',
          labels: { app: 'web', tier: 'front' },
          annotations: {
            'example.com/note': 'hello',
            'podmin.dev/aws-parameter-store': 'database-url,log-level',
            'podmin.dev/rollout':
              '{"type":"RollingUpdate","maxUnavailable":1,"maxSurge":0,"minReadySeconds":5,"progressDeadlineSeconds":300}',
            'podmin.dev/service': 'web-svc',
          },
        },
        spec: {
          terminationGracePeriodSeconds: 10,
          initContainers: [
            {
              name: 'migrate',
              image: 'registry.podmin.internal/apps/example/migrate:v1',
              imagePullPolicy: 'Always',
              volumeMounts: [IDENTITY_MOUNT],
            },
          ],
          containers: [
            {
              name: 'web',
              image: 'registry.podmin.internal/apps/example/web:v1',
              imagePullPolicy: 'IfNotPresent',
              ports: [{ containerPort: 8443 }],
              volumeMounts: [{ name: 'data', mountPath: '/data' }, IDENTITY_MOUNT],
            },
            {
              name: 'sidecar',
              image: 'registry.podmin.internal/apps/example/sidecar:v1',
              imagePullPolicy: 'Always',
              volumeMounts: [IDENTITY_MOUNT],
            },
          ],
          volumes: [
            { name: 'data', emptyDir: {} },
            {
              name: 'podmin-workload-identity',
              hostPath: { path: '/run/podmin/workloads/web/identity', type: 'Directory' },
            },
          ],
        },
      });
      expect(deployment.podYaml).toBe(stringifyCanonical(deployment.pod));
      expect(deployment.service).toEqual({
        name: 'web-svc',
        namespace: 'product',
        object: {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 'web-svc', namespace: 'product' },
          spec: {
            selector: { app: 'web' },
            ports: [
              { port: 443, protocol: 'TCP', targetPort: 8443 },
              { port: 53, protocol: 'UDP', targetPort: 53 },
            ],
          },
        },
        yaml: expect.any(String),
      });
      expect(deployment.service?.yaml).toBe(stringifyCanonical(deployment.service?.object));
    });

    it('accepts the Service before the DaemonSet with identical output', () => {
      const forward = build(`${FULL_DAEMONSET}---\n${SERVICE}`);
      const reverse = build(`---\n${SERVICE}---\n# comment only\n---\n${FULL_DAEMONSET}`);
      expect(reverse.podYaml).toBe(forward.podYaml);
      expect(reverse.service?.yaml).toBe(forward.service?.yaml);
    });

    it('produces byte-identical payloads regardless of input key order', () => {
      const reordered = stringifyCanonical(parseYamlStream(FULL_DAEMONSET, 'x')[0]);
      expect(reordered).not.toBe(FULL_DAEMONSET);
      expect(build(reordered).podYaml).toBe(build(FULL_DAEMONSET).podYaml);
    });

    it('defaults the namespace, drops the emptied nodeSelector and annotates the default strategy', () => {
      const deployment = build(MINIMAL);
      expect(deployment.namespace).toBe('default');
      expect(deployment.service).toBeUndefined();
      expect(deployment.pod.metadata).toEqual({
        name: 'app',
        namespace: 'default',
        labels: { 'app.kubernetes.io/name': 'app' },
        annotations: { 'podmin.dev/rollout': DEFAULT_ROLLOUT },
      });
      expect(deployment.pod.spec).not.toHaveProperty('nodeSelector');
      expect(deployment.podYaml).not.toContain('podmin.dev/nodegroup');
      expect(deployment.podYaml).toContain('imagePullPolicy: Always');
    });

    it('ignores DaemonSet-only fields and metadata when building the Pod', () => {
      const { pod, podYaml } = build(FULL_DAEMONSET);
      for (const dropped of [
        'updateStrategy',
        'revisionHistoryLimit',
        'team',
        'example.com/owner',
      ]) {
        expect(podYaml).not.toContain(dropped);
      }
      // minReadySeconds reaches the Pod only inside the strategy annotation.
      expect(pod.spec).not.toHaveProperty('minReadySeconds');
      expect(podYaml.match(/minReadySeconds/g)).toHaveLength(1);
      expect(podYaml).toContain('"minReadySeconds":5');
    });

    it('preserves other supported template content', () => {
      const text = edit(MINIMAL, [
        ['spec.template.spec.hostNetwork', true],
        ['spec.template.spec.securityContext', { runAsNonRoot: true }],
        ['spec.template.spec.containers.0.env', [{ name: 'A', value: 'yes' }]],
        ['spec.template.metadata.annotations', { 'podmin.dev/origin': 'install/cloudflared' }],
      ]);
      const { pod, podYaml } = build(text);
      expect(pod.spec).toMatchObject({
        hostNetwork: true,
        securityContext: { runAsNonRoot: true },
      });
      expect(podYaml).toContain('value: "yes"');
      expect(pod.metadata).toMatchObject({
        annotations: { 'podmin.dev/origin': 'install/cloudflared' },
      });
    });

    it('accepts matching name and nodegroup options', () => {
      expect(build(MINIMAL, { name: 'app', nodegroup: 'workers' }).name).toBe('app');
    });
  });

  describe('stream', () => {
    it('rejects a stream without a DaemonSet', () => {
      const err = expectInvalid(SERVICE);
      expect(messageFor(err, 'app.yaml')).toContain('contains no apps/v1 DaemonSet');
      expect(expectInvalid('').problems).toHaveLength(1);
    });

    it('rejects a second DaemonSet and a second Service with their lines', () => {
      const err = expectInvalid(`${MINIMAL}---\n${MINIMAL}`);
      expect(messageFor(err, 'app.yaml:20')).toContain('second DaemonSet');
      const services = expectInvalid(`${MINIMAL}---\n${MINIMAL_SERVICE}---\n${MINIMAL_SERVICE}`);
      expect(messageFor(services, 'app.yaml:30')).toContain('second Service');
    });

    it.each([
      [
        'apiVersion: v1\nkind: ConfigMap\n',
        'apiVersion "v1" with kind "ConfigMap" is not supported',
      ],
      ['apiVersion: extensions/v1beta1\nkind: DaemonSet\n', 'apiVersion "extensions/v1beta1"'],
      ['apiVersion: apps/v1\nkind: Service\n', 'kind "Service" is not supported'],
      ['kind: DaemonSet\n', 'apiVersion (missing)'],
      ['- a\n- b\n', 'document is a list'],
      ['just text\n', 'document is the string'],
    ])('rejects the extra document %j', (extra, message) => {
      const err = expectInvalid(`${MINIMAL}---\n${extra}`);
      expect(messageFor(err, 'app.yaml:20')).toContain(message);
      expect(err.message).toContain('exactly one apps/v1 DaemonSet and at most one v1 Service');
    });

    it('passes YAML strictness errors through', () => {
      const err = captureError(() => build(`${MINIMAL}metadata:\n  name: x\n`));
      expect(err.code).toBe('INVALID_MANIFEST');
      expect(err.message).toContain('app.yaml:19');
      expect(err.message).toContain('duplicate map key');
    });

    it('requires a Service for requireService and names --service', () => {
      const err = expectInvalid(MINIMAL, { requireService: true });
      expect(messageFor(err, '--service')).toContain('app.yaml defines no v1 Service');
      expect(
        build(`${MINIMAL}---\n${MINIMAL_SERVICE}`, { requireService: true }).service?.name,
      ).toBe('app');
    });
  });

  describe('DaemonSet fields', () => {
    it.each<[string, Edit[], string, string]>([
      [
        'unknown top-level field',
        [['replicas', 3]],
        'DaemonSet replicas',
        'allowed fields here are: apiVersion, kind, metadata, spec',
      ],
      ['missing metadata', [['metadata', undefined]], 'DaemonSet metadata', 'is required'],
      [
        'unknown metadata field',
        [['metadata.finalizers', ['x']]],
        'DaemonSet metadata.finalizers',
        'name, namespace, labels, annotations',
      ],
      ['missing name', [['metadata.name', undefined]], 'DaemonSet metadata.name', 'is required'],
      ['invalid name', [['metadata.name', 'Web_1']], 'DaemonSet metadata.name', 'DNS-1123 label'],
      ['long name', [['metadata.name', 'a'.repeat(64)]], 'DaemonSet metadata.name', 'at most 63'],
      ['numeric name', [['metadata.name', 12]], 'DaemonSet metadata.name', 'must be a string'],
      [
        'invalid namespace',
        [['metadata.namespace', 'Prod']],
        'DaemonSet metadata.namespace',
        'DNS-1123 label',
      ],
      [
        'reserved namespace',
        [['metadata.namespace', '_system']],
        'DaemonSet metadata.namespace',
        'is reserved',
      ],
      [
        'non-string label',
        [['metadata.labels', { team: 1 }]],
        'DaemonSet metadata.labels["team"]',
        'must be a string',
      ],
      [
        'invalid label key',
        [['metadata.labels', { 'a b': 'x' }]],
        'DaemonSet metadata.labels["a b"]',
        'qualified name',
      ],
      [
        'invalid label value',
        [['metadata.labels', { a: 'x y' }]],
        'DaemonSet metadata.labels["a"]',
        'label values',
      ],
      [
        'non-string annotation',
        [['metadata.annotations', { a: true }]],
        'DaemonSet metadata.annotations["a"]',
        'must be a string',
      ],
      [
        'annotations not a map',
        [['metadata.annotations', ['a']]],
        'DaemonSet metadata.annotations',
        'must be a mapping',
      ],
      ['missing spec', [['spec', undefined]], 'DaemonSet spec', 'is required'],
      [
        'unknown spec field',
        [['spec.replicas', 2]],
        'DaemonSet spec.replicas',
        'selector, template, updateStrategy',
      ],
      [
        'negative minReadySeconds',
        [['spec.minReadySeconds', -1]],
        'DaemonSet spec.minReadySeconds',
        'integer from 0',
      ],
      [
        'missing selector',
        [['spec.selector', undefined]],
        'DaemonSet spec.selector',
        'is required',
      ],
      [
        'matchExpressions',
        [['spec.selector.matchExpressions', [{ key: 'app', operator: 'Exists' }]]],
        'DaemonSet spec.selector.matchExpressions',
        'matchLabels only',
      ],
      [
        'missing matchLabels',
        [['spec.selector.matchLabels', undefined]],
        'DaemonSet spec.selector.matchLabels',
        'is required',
      ],
      [
        'empty matchLabels',
        [['spec.selector.matchLabels', {}]],
        'DaemonSet spec.selector.matchLabels',
        'must not be empty',
      ],
      [
        'matchLabels not in template',
        [['spec.selector.matchLabels', { 'app.kubernetes.io/name': 'other' }]],
        'DaemonSet spec.selector.matchLabels["app.kubernetes.io/name"]',
        'subset of the Pod template labels',
      ],
      [
        'missing template',
        [['spec.template', undefined]],
        'DaemonSet spec.template',
        'is required',
      ],
      [
        'unknown template field',
        [['spec.template.status', 1]],
        'DaemonSet spec.template.status',
        'metadata, spec',
      ],
      [
        'template name',
        [['spec.template.metadata.name', 'x']],
        'DaemonSet spec.template.metadata.name',
        'DaemonSet metadata.name',
      ],
      [
        'template namespace',
        [['spec.template.metadata.namespace', 'x']],
        'DaemonSet spec.template.metadata.namespace',
        'DaemonSet metadata.namespace',
      ],
      [
        'unknown template metadata field',
        [['spec.template.metadata.generateName', 'x']],
        'DaemonSet spec.template.metadata.generateName',
        'is not supported',
      ],
      [
        'missing template labels',
        [['spec.template.metadata.labels', undefined]],
        'DaemonSet spec.template.metadata.labels',
        'is required',
      ],
      [
        'missing template spec',
        [['spec.template.spec', undefined]],
        'DaemonSet spec.template.spec',
        'is required',
      ],
      [
        'unknown PodSpec field',
        [['spec.template.spec.containerz', []]],
        'DaemonSet spec.template.spec.containerz',
        'not a Kubernetes v1 PodSpec field',
      ],
      [
        'unknown Container field',
        [['spec.template.spec.containers.0.imagePullPolicyy', 'Always']],
        'DaemonSet spec.template.spec.containers[0].imagePullPolicyy',
        'not a Kubernetes v1 Container field',
      ],
      [
        'ephemeral containers',
        [['spec.template.spec.ephemeralContainers', [{ name: 'debug' }]]],
        'DaemonSet spec.template.spec.ephemeralContainers',
        'is not supported',
      ],
    ])('rejects %s', (_title, edits, field, message) => {
      const err = expectInvalid(edit(MINIMAL, edits));
      expect(messageFor(err, field)).toContain(message);
    });

    it('accepts every Kubernetes v1 PodSpec and Container field name', () => {
      const text = edit(MINIMAL, [
        ['spec.template.spec.dnsPolicy', 'ClusterFirst'],
        ['spec.template.spec.hostAliases', []],
        ['spec.template.spec.priorityClassName', 'high'],
        ['spec.template.spec.runtimeClassName', 'gvisor'],
        ['spec.template.spec.tolerations', []],
        ['spec.template.spec.containers.0.startupProbe', { exec: { command: ['true'] } }],
        ['spec.template.spec.containers.0.resizePolicy', []],
        ['spec.template.spec.containers.0.lifecycle', {}],
        ['spec.template.spec.containers.0.tty', false],
      ]);
      expect(build(text).pod.spec).toMatchObject({
        dnsPolicy: 'ClusterFirst',
        runtimeClassName: 'gvisor',
      });
    });

    it('collects many problems in one error', () => {
      const err = expectInvalid(
        edit(MINIMAL, [
          ['metadata.name', 'Bad'],
          ['spec.replicas', 1],
          ['spec.template.spec.nodeName', 'n1'],
          ['spec.template.spec.containers.0.image', 'docker.io/library/nginx:1.27'],
        ]),
      );
      expect(err.problems.map((p) => p.field)).toEqual(
        expect.arrayContaining([
          'DaemonSet metadata.name',
          'DaemonSet spec.replicas',
          'DaemonSet spec.template.spec.nodeName',
          'DaemonSet spec.template.spec.containers[0].image',
        ]),
      );
    });

    it('requires metadata.name to equal the deployment name', () => {
      const err = expectInvalid(MINIMAL, { name: 'other' });
      expect(messageFor(err, 'DaemonSet metadata.name')).toBe(
        'is "app" but the deployment name is "other"; they must match',
      );
    });
  });

  describe('scheduling', () => {
    const selectorPath = 'DaemonSet spec.template.spec.nodeSelector';

    it('requires the NodeGroup nodeSelector', () => {
      const err = expectInvalid(edit(MINIMAL, [['spec.template.spec.nodeSelector', undefined]]));
      expect(messageFor(err, selectorPath)).toContain('podmin.dev/nodegroup: <nodegroup>');
      const empty = expectInvalid(edit(MINIMAL, [['spec.template.spec.nodeSelector', {}]]));
      expect(messageFor(empty, selectorPath)).toContain('has no podmin.dev/nodegroup');
      const list = expectInvalid(edit(MINIMAL, [['spec.template.spec.nodeSelector', ['x']]]));
      expect(messageFor(list, selectorPath)).toContain('must be exactly');
    });

    it('rejects any other node selector key', () => {
      const err = expectInvalid(
        edit(MINIMAL, [
          [['spec', 'template', 'spec', 'nodeSelector', 'kubernetes.io/arch'], 'arm64'],
        ]),
      );
      expect(messageFor(err, `${selectorPath}["kubernetes.io/arch"]`)).toContain(
        'sole scheduling target',
      );
    });

    it('rejects an invalid NodeGroup name', () => {
      const err = expectInvalid(
        edit(MINIMAL, [
          [['spec', 'template', 'spec', 'nodeSelector', 'podmin.dev/nodegroup'], 'Workers!'],
        ]),
      );
      expect(messageFor(err, `${selectorPath}["podmin.dev/nodegroup"]`)).toContain(
        'DNS-1123 label',
      );
    });

    it('requires the selector to equal --nodegroup', () => {
      const err = expectInvalid(MINIMAL, { nodegroup: 'gpu' });
      expect(messageFor(err, `${selectorPath}["podmin.dev/nodegroup"]`)).toBe(
        'is "workers" but --nodegroup is "gpu"; they must match',
      );
    });

    it.each([
      ['nodeName', 'node-1'],
      ['affinity', { nodeAffinity: {} }],
      ['schedulerName', 'custom'],
      ['topologySpreadConstraints', []],
    ])('rejects %s', (field, value) => {
      const err = expectInvalid(edit(MINIMAL, [[`spec.template.spec.${field}`, value]]));
      expect(messageFor(err, `DaemonSet spec.template.spec.${field}`)).toContain(
        'podmin.dev/nodegroup: <nodegroup> is the sole scheduling target',
      );
    });
  });

  describe('annotations', () => {
    const annotationsPath = 'DaemonSet spec.template.metadata.annotations';

    it.each(['database-url', 'database-url,log-level', 'A.b_c-1,x'])(
      'accepts secret keys %j',
      (keys) => {
        for (const annotation of [
          'podmin.dev/aws-parameter-store',
          'podmin.dev/aws-secrets-manager',
        ]) {
          const text = edit(MINIMAL, [
            ['spec.template.metadata.annotations', { [annotation]: keys }],
          ]);
          expect(build(text).pod.metadata).toMatchObject({ annotations: { [annotation]: keys } });
        }
      },
    );

    it.each([
      ['a,,b', 'key ""'],
      ['', 'key ""'],
      ['..', 'key ".."'],
      ['.', 'key "."'],
      ['.hidden', 'key ".hidden"'],
      ['a/b', 'key "a/b"'],
      ['a, b', 'key " b"'],
      ['a,b,a', 'key "a" is listed more than once'],
    ])('rejects secret keys %j', (keys, message) => {
      for (const annotation of [
        'podmin.dev/aws-parameter-store',
        'podmin.dev/aws-secrets-manager',
      ]) {
        const text = edit(MINIMAL, [
          ['spec.template.metadata.annotations', { [annotation]: keys }],
        ]);
        const err = expectInvalid(text);
        const problem = messageFor(err, `${annotationsPath}["${annotation}"]`);
        expect(problem).toContain(message);
        if (!message.includes('more than once')) {
          expect(problem).toContain('single path component');
        }
      }
    });

    it.each([
      'podmin.dev/service',
      'podmin.dev/revision',
      'podmin.dev/identity-revision',
      'podmin.dev/rollout',
    ])('rejects the reserved annotation %s', (annotation) => {
      const text = edit(MINIMAL, [['spec.template.metadata.annotations', { [annotation]: 'x' }]]);
      expect(messageFor(expectInvalid(text), `${annotationsPath}["${annotation}"]`)).toContain(
        'is set by podmin',
      );
    });
  });

  describe('update strategy', () => {
    const RU = 'DaemonSet spec.updateStrategy.rollingUpdate';
    const INT_OR_PERCENT = 'an integer ≥ 0 or a percentage from "0%" to "100%"';
    const rolling = (rollingUpdate: unknown, edits: Edit[] = []): string =>
      edit(MINIMAL, [['spec.updateStrategy', { type: 'RollingUpdate', rollingUpdate }], ...edits]);
    const rolloutOf = (text: string): unknown =>
      JSON.parse(
        (build(text).pod.metadata as { annotations: Record<string, string> }).annotations[
          'podmin.dev/rollout'
        ] ?? 'null',
      );

    it("defaults to Kubernetes' DaemonSet strategy and a 5-minute deadline", () => {
      const deployment = build(MINIMAL);
      expect(deployment.strategy).toEqual({
        type: 'RollingUpdate',
        maxUnavailable: 1,
        maxSurge: 0,
        minReadySeconds: 0,
        progressDeadlineSeconds: 300,
      });
      expect(deployment.podYaml).toContain(`podmin.dev/rollout: '${DEFAULT_ROLLOUT}'`);
      for (const updateStrategy of [{}, { type: 'RollingUpdate' }, { rollingUpdate: {} }]) {
        const text = edit(MINIMAL, [['spec.updateStrategy', updateStrategy]]);
        expect(build(text).podYaml).toBe(build(MINIMAL).podYaml);
      }
    });

    it('carries every setting, percentages included, in the payload annotation', () => {
      const text = rolling({ maxUnavailable: '25%', maxSurge: '100%' }, [
        ['spec.minReadySeconds', 10],
        ['metadata.annotations', { 'podmin.dev/progress-deadline': '1h30m' }],
      ]);
      const deployment = build(text);
      const strategy = {
        type: 'RollingUpdate',
        maxUnavailable: '25%',
        maxSurge: '100%',
        minReadySeconds: 10,
        progressDeadlineSeconds: 5400,
      };
      expect(deployment.strategy).toEqual(strategy);
      expect(rolloutOf(text)).toEqual(strategy);
      expect((deployment.pod.metadata as { annotations: unknown }).annotations).toEqual({
        'podmin.dev/rollout':
          '{"type":"RollingUpdate","maxUnavailable":"25%","maxSurge":"100%","minReadySeconds":10,"progressDeadlineSeconds":5400}',
      });
      // The deadline is folded into the strategy; the annotation itself stays off the Pod.
      expect(deployment.podYaml).not.toContain('progress-deadline');
    });

    it.each<[unknown, unknown, unknown]>([
      [{ maxSurge: 1, maxUnavailable: 0 }, 0, 1],
      [{ maxSurge: '0%', maxUnavailable: '100%' }, '100%', '0%'],
      [{ maxSurge: 0 }, 1, 0],
      [{ maxUnavailable: 0, maxSurge: '1%' }, 0, '1%'],
      [{ maxUnavailable: '0%', maxSurge: 3 }, '0%', 3],
      [{ maxUnavailable: 7 }, 7, 0],
    ])('accepts rollingUpdate %j', (rollingUpdate, maxUnavailable, maxSurge) => {
      expect(build(rolling(rollingUpdate)).strategy).toMatchObject({ maxUnavailable, maxSurge });
    });

    it('accepts OnDelete with the default limits and no rollingUpdate', () => {
      const text = edit(MINIMAL, [['spec.updateStrategy', { type: 'OnDelete' }]]);
      expect(rolloutOf(text)).toEqual({
        type: 'OnDelete',
        maxUnavailable: 1,
        maxSurge: 0,
        minReadySeconds: 0,
        progressDeadlineSeconds: 300,
      });
    });

    it.each(['90s', '5m', '1h30m', '1h', '2m30s'])('accepts the progress deadline %s', (d) => {
      const text = edit(MINIMAL, [['metadata.annotations', { 'podmin.dev/progress-deadline': d }]]);
      expect(build(text).strategy.progressDeadlineSeconds).toBeGreaterThan(0);
    });

    it.each<[string, Edit[], string, string[]]>([
      [
        'updateStrategy not a mapping',
        [['spec.updateStrategy', 'RollingUpdate']],
        'DaemonSet spec.updateStrategy',
        ['must be a mapping'],
      ],
      [
        'an unknown strategy type',
        [['spec.updateStrategy', { type: 'Recreate' }]],
        'DaemonSet spec.updateStrategy.type',
        ['must be RollingUpdate (the default) or OnDelete, not the string "Recreate"'],
      ],
      [
        'a lower-case strategy type',
        [['spec.updateStrategy', { type: 'rollingUpdate' }]],
        'DaemonSet spec.updateStrategy.type',
        ['RollingUpdate (the default) or OnDelete'],
      ],
      [
        'an unknown updateStrategy field',
        [['spec.updateStrategy', { type: 'RollingUpdate', maxSurge: 1 }]],
        'DaemonSet spec.updateStrategy.maxSurge',
        ['is not supported; allowed fields here are: type, rollingUpdate'],
      ],
      [
        'rollingUpdate with OnDelete',
        [['spec.updateStrategy', { type: 'OnDelete', rollingUpdate: { maxSurge: 1 } }]],
        'DaemonSet spec.updateStrategy.rollingUpdate',
        ['is only allowed with type RollingUpdate', 'remove rollingUpdate'],
      ],
      [
        'rollingUpdate not a mapping',
        [['spec.updateStrategy', { rollingUpdate: 1 }]],
        RU,
        ['must be a mapping'],
      ],
      [
        'an unknown rollingUpdate field',
        [['spec.updateStrategy', { rollingUpdate: { partition: 1 } }]],
        `${RU}.partition`,
        ['allowed fields here are: maxUnavailable, maxSurge'],
      ],
      [
        'both limits 0',
        [['spec.updateStrategy', { rollingUpdate: { maxUnavailable: 0, maxSurge: 0 } }]],
        `${RU}.maxUnavailable`,
        [
          'may not be 0 when spec.updateStrategy.rollingUpdate.maxSurge is also 0:',
          'set maxSurge to 1 or more',
          'or maxUnavailable to 1 or more',
        ],
      ],
      [
        'maxUnavailable 0 with the default maxSurge',
        [['spec.updateStrategy', { rollingUpdate: { maxUnavailable: 0 } }]],
        `${RU}.maxUnavailable`,
        ['spec.updateStrategy.rollingUpdate.maxSurge is also 0 (its default)'],
      ],
      [
        'both limits 0%',
        [['spec.updateStrategy', { rollingUpdate: { maxUnavailable: '0%', maxSurge: '0%' } }]],
        `${RU}.maxUnavailable`,
        ['may not be 0 when spec.updateStrategy.rollingUpdate.maxSurge is also 0'],
      ],
      [
        'a negative minReadySeconds',
        [['spec.minReadySeconds', -1]],
        'DaemonSet spec.minReadySeconds',
        ['must be an integer from 0 through 2147483647'],
      ],
      [
        'a fractional minReadySeconds',
        [['spec.minReadySeconds', 1.5]],
        'DaemonSet spec.minReadySeconds',
        ['must be an integer from 0 through 2147483647'],
      ],
      [
        'the progress deadline on the Pod template',
        [['spec.template.metadata.annotations', { 'podmin.dev/progress-deadline': '5m' }]],
        'DaemonSet spec.template.metadata.annotations["podmin.dev/progress-deadline"]',
        ['belongs on the DaemonSet', 'move it to metadata.annotations'],
      ],
    ])('refuses %s, naming the field and what is allowed', (_title, edits, field, parts) => {
      const err = expectInvalid(edit(MINIMAL, edits));
      const message = messageFor(err, field);
      for (const part of parts) expect(message).toContain(part);
      expect(err.problems).toHaveLength(1);
    });

    it.each<[string, unknown, string]>([
      ['maxSurge', -1, 'the number -1'],
      ['maxSurge', 1.5, 'the number 1.5'],
      ['maxSurge', '101%', 'the string "101%"'],
      ['maxSurge', '5', 'the string "5"'],
      ['maxSurge', '25 %', 'the string "25 %"'],
      ['maxSurge', '-10%', 'the string "-10%"'],
      ['maxSurge', true, 'the boolean true'],
      ['maxUnavailable', -1, 'the number -1'],
      ['maxUnavailable', '1000%', 'the string "1000%"'],
      ['maxUnavailable', '50.5%', 'the string "50.5%"'],
      ['maxUnavailable', null, 'null'],
    ])('refuses %s %j', (field, value, shown) => {
      const err = expectInvalid(rolling({ [field]: value }));
      const defaultValue = field === 'maxSurge' ? 0 : 1;
      expect(messageFor(err, `${RU}.${field}`)).toBe(
        `must be ${INT_OR_PERCENT} (default ${defaultValue}), not ${shown}`,
      );
      // No second complaint about the pair while one of them is unreadable.
      expect(err.problems).toHaveLength(1);
    });

    it.each(['5', '5min', '0s', '0m', '', '1d', '1.5h', '-5m', '5m 30s', 'P5M'])(
      'refuses the progress deadline %j',
      (deadline) => {
        const text = edit(MINIMAL, [
          ['metadata.annotations', { 'podmin.dev/progress-deadline': deadline }],
        ]);
        expect(
          messageFor(
            expectInvalid(text),
            'DaemonSet metadata.annotations["podmin.dev/progress-deadline"]',
          ),
        ).toBe(
          `${JSON.stringify(deadline)} is not a duration; write a positive whole number of hours, minutes and seconds such as 90s, 5m or 1h30m (default 5m)`,
        );
      },
    );

    it('accepts and carries podmin.dev/restartedAt on the template', () => {
      const text = edit(MINIMAL, [
        [
          'spec.template.metadata.annotations',
          { 'podmin.dev/restartedAt': '2025-01-02T03:04:05Z' },
        ],
      ]);
      expect(build(text).pod.metadata).toMatchObject({
        annotations: {
          'podmin.dev/restartedAt': '2025-01-02T03:04:05Z',
          'podmin.dev/rollout': DEFAULT_ROLLOUT,
        },
      });
    });

    describe('with host ports', () => {
      const SPEC = 'spec.template.spec';
      const HOST_PORT = `DaemonSet ${SPEC}.containers[0].ports[0].hostPort`;
      const hostPort: Edit = [`${SPEC}.containers.0.ports`, [{ containerPort: 80, hostPort: 80 }]];

      it.each<[unknown, string]>([
        [{ maxSurge: 1, maxUnavailable: 0 }, '1'],
        [{ maxSurge: '10%' }, '"10%"'],
      ])('refuses a hostPort with rollingUpdate %j', (rollingUpdate, shown) => {
        const err = expectInvalid(rolling(rollingUpdate, [hostPort]));
        expect(messageFor(err, HOST_PORT)).toBe(
          `cannot be used with spec.updateStrategy.rollingUpdate.maxSurge ${shown}: during a surge the old and the new Pod run side by side on a node and would both need this host port; set maxSurge to 0 or remove the hostPort (with maxUnavailable 1 or more, the old Pod stops before the new one starts)`,
        );
        expect(err.problems).toHaveLength(1);
      });

      it('refuses hostNetwork with a surge, and names every host port', () => {
        const err = expectInvalid(
          rolling({ maxSurge: 1, maxUnavailable: 0 }, [
            [`${SPEC}.hostNetwork`, true],
            [
              `${SPEC}.containers.0.ports`,
              [{ containerPort: 80 }, { containerPort: 53, hostPort: 53 }],
            ],
            [
              `${SPEC}.initContainers`,
              [{ name: 'init', image: 'hello:v1', ports: [{ containerPort: 9, hostPort: 9 }] }],
            ],
          ]),
        );
        expect(messageFor(err, `DaemonSet ${SPEC}.hostNetwork`)).toBe(
          "true cannot be used with spec.updateStrategy.rollingUpdate.maxSurge 1: during a surge the old and the new Pod run side by side on a node and would both bind the node's network ports; set maxSurge to 0 (with maxUnavailable 1 or more, the old Pod stops before the new one starts)",
        );
        expect(messageFor(err, `DaemonSet ${SPEC}.containers[0].ports[1].hostPort`)).toContain(
          'set maxSurge to 0',
        );
        expect(messageFor(err, `DaemonSet ${SPEC}.initContainers[0].ports[0].hostPort`)).toContain(
          'both need this host port',
        );
        expect(err.problems).toHaveLength(3);
      });

      it.each<[string, Edit[]]>([
        ['the default strategy', [hostPort]],
        ['maxSurge 0', [['spec.updateStrategy', { rollingUpdate: { maxSurge: 0 } }], hostPort]],
        ['maxSurge 0%', [['spec.updateStrategy', { rollingUpdate: { maxSurge: '0%' } }], hostPort]],
        ['OnDelete', [['spec.updateStrategy', { type: 'OnDelete' }], hostPort]],
        ['hostNetwork without a surge', [[`${SPEC}.hostNetwork`, true]]],
        [
          'hostPort 0 with a surge',
          [
            ['spec.updateStrategy', { rollingUpdate: { maxSurge: 1 } }],
            [`${SPEC}.containers.0.ports`, [{ containerPort: 80, hostPort: 0 }]],
          ],
        ],
        [
          'hostNetwork false with a surge',
          [
            ['spec.updateStrategy', { rollingUpdate: { maxSurge: 1 } }],
            [`${SPEC}.hostNetwork`, false],
          ],
        ],
      ])('accepts host ports with %s', (_title, edits) => {
        expect(build(edit(MINIMAL, edits)).pod).toBeDefined();
      });
    });
  });

  describe('containers and images', () => {
    const containers = 'DaemonSet spec.template.spec.containers';

    it('applies named overrides to regular and init containers, adding missing image fields', () => {
      const text = edit(FULL_DAEMONSET, [['spec.template.spec.initContainers.0.image', undefined]]);
      const { pod } = build(text, {
        images: parseImageFlags([
          'migrate=example/migrate:v2',
          'sidecar=registry.podmin.internal/mirror/docker.io/x:1',
        ]),
      });
      expect(pod.spec).toMatchObject({
        initContainers: [
          { name: 'migrate', image: 'registry.podmin.internal/apps/example/migrate:v2' },
        ],
        containers: [
          { name: 'web', image: 'registry.podmin.internal/apps/example/web:v1' },
          { name: 'sidecar', image: 'registry.podmin.internal/mirror/docker.io/x:1' },
        ],
      });
    });

    it('applies a bare override to the only container, even without an image field', () => {
      const text = edit(MINIMAL, [['spec.template.spec.containers.0.image', undefined]]);
      const { pod } = build(text, { images: parseImageFlags(['other:v2']) });
      expect(pod.spec).toMatchObject({
        containers: [{ image: 'registry.podmin.internal/apps/other:v2' }],
      });
    });

    it('rejects a bare override with several containers or any init container', () => {
      const err = expectInvalid(FULL_DAEMONSET, { images: parseImageFlags(['x:v1']) });
      expect(messageFor(err, '--image')).toContain(
        'needs exactly one container and no init containers',
      );
      const withInit = edit(MINIMAL, [
        ['spec.template.spec.initContainers', [{ name: 'init', image: 'x' }]],
      ]);
      expect(
        messageFor(expectInvalid(withInit, { images: parseImageFlags(['x:v1']) }), '--image'),
      ).toContain('1 container(s) and 1 init container(s)');
    });

    it('rejects an override for an unknown container, listing the names', () => {
      const err = expectInvalid(FULL_DAEMONSET, { images: parseImageFlags(['db=x:v1']) });
      expect(messageFor(err, '--image')).toBe(
        'no container named "db" in spec.template.spec; containers and init containers are: web, sidecar, migrate',
      );
    });

    it('rejects invalid overrides passed directly', () => {
      const err = expectInvalid(MINIMAL, { images: { bare: 'x', named: new Map([['app', 'y']]) } });
      expect(messageFor(err, '--image')).toContain('cannot combine');
    });

    it('requires every regular and init container to have an image', () => {
      const text = edit(FULL_DAEMONSET, [
        ['spec.template.spec.initContainers.0.image', undefined],
        ['spec.template.spec.containers.1.image', ''],
      ]);
      const err = expectInvalid(text);
      expect(messageFor(err, 'DaemonSet spec.template.spec.initContainers[0].image')).toContain(
        'container "migrate" has no image; every container needs an image',
      );
      expect(messageFor(err, `${containers}[1].image`)).toContain('--image sidecar=<reference>');
    });

    it('rejects foreign registries with push guidance, noting overrides', () => {
      const err = expectInvalid(
        edit(MINIMAL, [['spec.template.spec.containers.0.image', 'ghcr.io/x/y:v1']]),
      );
      expect(messageFor(err, `${containers}[0].image`)).toContain(
        'run `podmin push ghcr.io/x/y:v1`',
      );
      const flagged = expectInvalid(MINIMAL, { images: parseImageFlags(['app=docker.io/x/y']) });
      expect(
        messageFor(flagged, `${containers}[0].image (set by --image app=docker.io/x/y)`),
      ).toContain('podmin push docker.io/x/y');
    });

    it('rejects non-string images', () => {
      const err = expectInvalid(edit(MINIMAL, [['spec.template.spec.containers.0.image', 5]]));
      expect(messageFor(err, `${containers}[0].image`)).toContain(
        'must be a string image reference',
      );
    });

    it('defaults imagePullPolicy to Always and keeps allowed values', () => {
      for (const policy of ['Always', 'IfNotPresent', 'Never']) {
        const text = edit(MINIMAL, [['spec.template.spec.containers.0.imagePullPolicy', policy]]);
        expect(build(text).pod.spec).toMatchObject({ containers: [{ imagePullPolicy: policy }] });
      }
      const err = expectInvalid(
        edit(MINIMAL, [['spec.template.spec.containers.0.imagePullPolicy', 'always']]),
      );
      expect(messageFor(err, `${containers}[0].imagePullPolicy`)).toContain(
        'Always, IfNotPresent, Never',
      );
    });

    it('requires at least one container', () => {
      expect(
        messageFor(
          expectInvalid(edit(MINIMAL, [['spec.template.spec.containers', []]])),
          containers,
        ),
      ).toContain('at least one container');
      expect(
        messageFor(
          expectInvalid(edit(MINIMAL, [['spec.template.spec.containers', undefined]])),
          containers,
        ),
      ).toContain('is required');
      expect(
        messageFor(
          expectInvalid(edit(MINIMAL, [['spec.template.spec.containers', {}]])),
          containers,
        ),
      ).toContain('must be a list');
      expect(
        messageFor(
          expectInvalid(edit(MINIMAL, [['spec.template.spec.containers', ['x']]])),
          `${containers}[0]`,
        ),
      ).toContain('must be a mapping');
    });

    it('requires unique DNS-1123 container names across containers and init containers', () => {
      const duplicate = edit(FULL_DAEMONSET, [['spec.template.spec.initContainers.0.name', 'web']]);
      expect(
        messageFor(expectInvalid(duplicate), 'DaemonSet spec.template.spec.initContainers[0].name'),
      ).toContain('"web" is already used by spec.template.spec.containers[0]');
      const invalid = edit(MINIMAL, [['spec.template.spec.containers.0.name', 'App']]);
      expect(messageFor(expectInvalid(invalid), `${containers}[0].name`)).toContain(
        'DNS-1123 label',
      );
      const missing = edit(MINIMAL, [['spec.template.spec.containers.0.name', undefined]]);
      expect(messageFor(expectInvalid(missing), `${containers}[0].name`)).toContain('is required');
    });
  });

  describe('workload identity', () => {
    const identityVolume = {
      name: 'podmin-workload-identity',
      hostPath: { path: '/run/podmin/workloads/app/identity', type: 'Directory' },
    };
    const volumes = 'DaemonSet spec.template.spec.volumes';
    const mounts = 'DaemonSet spec.template.spec.containers[0].volumeMounts';

    it('does not duplicate an identical volume and exact mount', () => {
      const text = edit(MINIMAL, [
        ['spec.template.spec.volumes', [identityVolume]],
        ['spec.template.spec.containers.0.volumeMounts', [IDENTITY_MOUNT]],
      ]);
      const { pod } = build(text);
      expect(pod.spec).toMatchObject({
        volumes: [identityVolume],
        containers: [{ volumeMounts: [IDENTITY_MOUNT] }],
      });
    });

    it('adds the volume and mount when absent', () => {
      const { pod } = build(MINIMAL);
      expect(pod.spec).toMatchObject({
        volumes: [identityVolume],
        containers: [{ volumeMounts: [IDENTITY_MOUNT] }],
      });
    });

    it('rejects a different volume using the reserved name', () => {
      const text = edit(MINIMAL, [
        ['spec.template.spec.volumes', [{ name: 'podmin-workload-identity', emptyDir: {} }]],
      ]);
      expect(messageFor(expectInvalid(text), `${volumes}[0]`)).toContain(
        'reserved for the workload identity; remove this volume (podmin adds it) or define it exactly as hostPath {path: /run/podmin/workloads/app/identity, type: Directory}',
      );
    });

    it.each([
      ['another path', { ...IDENTITY_MOUNT, mountPath: '/tls' }],
      ['not read-only', { ...IDENTITY_MOUNT, readOnly: false }],
      [
        'readOnly omitted',
        { name: 'podmin-workload-identity', mountPath: '/var/run/secrets/podmin.dev/tls' },
      ],
      ['extra fields', { ...IDENTITY_MOUNT, subPath: 'tls.crt' }],
    ])('rejects a mount of the identity volume at %s', (_title, mount) => {
      const text = edit(MINIMAL, [['spec.template.spec.containers.0.volumeMounts', [mount]]]);
      expect(messageFor(expectInvalid(text), `${mounts}[0]`)).toContain(
        'may only be mounted at /var/run/secrets/podmin.dev/tls with readOnly: true',
      );
    });

    it.each([
      '/var/run/secrets/podmin.dev/tls',
      '/var/run/secrets/podmin.dev/tls/',
      '/var/run/secrets',
      '/var',
      '/',
      '/var/run/secrets/podmin.dev/tls/extra',
    ])('rejects another volume mounted at %s', (mountPath) => {
      const text = edit(MINIMAL, [
        ['spec.template.spec.volumes', [{ name: 'data', emptyDir: {} }]],
        ['spec.template.spec.containers.0.volumeMounts', [{ name: 'data', mountPath }]],
      ]);
      expect(messageFor(expectInvalid(text), `${mounts}[0].mountPath`)).toContain(
        'overlaps the workload identity mount /var/run/secrets/podmin.dev/tls',
      );
    });

    it('accepts sibling paths such as the service-account location', () => {
      const text = edit(MINIMAL, [
        ['spec.template.spec.volumes', [{ name: 'data', emptyDir: {} }]],
        [
          'spec.template.spec.containers.0.volumeMounts',
          [
            { name: 'data', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' },
            { name: 'data', mountPath: '/var/run/secrets/podmin.dev/tls2' },
          ],
        ],
      ]);
      expect(build(text).pod.spec).toMatchObject({
        containers: [{ volumeMounts: expect.any(Array) }],
      });
    });

    it('mounts the identity into init containers too', () => {
      const text = edit(MINIMAL, [
        ['spec.template.spec.initContainers', [{ name: 'init', image: 'x' }]],
      ]);
      expect(build(text).pod.spec).toMatchObject({
        initContainers: [{ volumeMounts: [IDENTITY_MOUNT] }],
      });
    });

    it('rejects reserved secret volume names and paths', () => {
      const text = edit(MINIMAL, [
        [
          'spec.template.spec.volumes',
          [
            { name: 'podmin-aws-parameter-store', emptyDir: {} },
            { name: 'data', emptyDir: {} },
          ],
        ],
        [
          'spec.template.spec.containers.0.volumeMounts',
          [
            { name: 'podmin-aws-secrets-manager', mountPath: '/secrets' },
            { name: 'data', mountPath: '/var/run/podmin/aws-parameter-store' },
            { name: 'data', mountPath: '/var/run/podmin' },
          ],
        ],
      ]);
      const err = expectInvalid(text);
      expect(messageFor(err, `${volumes}[0].name`)).toContain(
        '"podmin-aws-parameter-store" is reserved',
      );
      expect(messageFor(err, `${mounts}[0].name`)).toContain(
        '"podmin-aws-secrets-manager" is reserved',
      );
      expect(messageFor(err, `${mounts}[1].mountPath`)).toContain('under /var/run/podmin');
      expect(messageFor(err, `${mounts}[2].mountPath`)).toContain('reserves for secret mounts');
    });

    it('rejects duplicate volume names and malformed mounts', () => {
      const text = edit(MINIMAL, [
        [
          'spec.template.spec.volumes',
          [
            { name: 'data', emptyDir: {} },
            { name: 'data', emptyDir: {} },
          ],
        ],
        [
          'spec.template.spec.containers.0.volumeMounts',
          [{ name: 'data', mountPath: 'relative' }, {}],
        ],
      ]);
      const err = expectInvalid(text);
      expect(messageFor(err, `${volumes}[1].name`)).toContain('volume names must be unique');
      expect(messageFor(err, `${mounts}[0].mountPath`)).toContain('absolute path');
      expect(messageFor(err, `${mounts}[1].name`)).toContain('is required');
    });
  });

  describe('Service', () => {
    const withService = (edits: Edit[], daemonSet = MINIMAL): string =>
      `${daemonSet}---\n${edit(MINIMAL_SERVICE, edits)}`;

    it('fills in namespace, protocol and targetPort defaults and annotates the Pod', () => {
      const deployment = build(`${MINIMAL}---\n${MINIMAL_SERVICE}`);
      expect(deployment.service?.object).toEqual({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'app', namespace: 'default' },
        spec: {
          selector: { 'app.kubernetes.io/name': 'app' },
          ports: [{ port: 80, protocol: 'TCP', targetPort: 80 }],
        },
      });
      expect(deployment.service?.yaml).toBe(
        [
          'apiVersion: v1',
          'kind: Service',
          'metadata:',
          '  name: app',
          '  namespace: default',
          'spec:',
          '  ports:',
          '    - port: 80',
          '      protocol: TCP',
          '      targetPort: 80',
          '  selector:',
          '    app.kubernetes.io/name: app',
          '',
        ].join('\n'),
      );
      expect(deployment.pod.metadata).toMatchObject({
        annotations: { 'podmin.dev/service': 'app' },
      });
    });

    it('accepts a different name and the same port on TCP and UDP', () => {
      const text = withService([
        ['metadata.name', 'other'],
        ['spec.ports', [{ port: 53 }, { port: 53, protocol: 'UDP', targetPort: 5353 }]],
      ]);
      const deployment = build(text);
      expect(deployment.service?.name).toBe('other');
      expect(deployment.service?.object.spec).toEqual({
        selector: { 'app.kubernetes.io/name': 'app' },
        ports: [
          { port: 53, protocol: 'TCP', targetPort: 53 },
          { port: 53, protocol: 'UDP', targetPort: 5353 },
        ],
      });
      expect(deployment.warnings).toEqual([]);
    });

    it('warns, not fails, when the selector matches no Pod of its own DaemonSet', () => {
      const deployment = build(withService([['spec.selector', { app: 'other' }]]));
      expect(deployment.service?.object.spec).toMatchObject({ selector: { app: 'other' } });
      expect(deployment.warnings).toEqual([
        expect.stringContaining('selects no Pod of this DaemonSet') as unknown,
      ]);
      expect(deployment.warnings[0]).toContain('app: "other"');
    });

    it('requires the DaemonSet namespace', () => {
      const explicit = expectInvalid(withService([['metadata.namespace', 'product']]));
      expect(messageFor(explicit, 'Service metadata.namespace')).toBe(
        'is "product" but the DaemonSet\'s namespace is "default"; a Service must be in its DaemonSet\'s namespace',
      );
      const omitted = expectInvalid(
        withService([], edit(MINIMAL, [['metadata.namespace', 'product']])),
      );
      expect(messageFor(omitted, 'Service metadata.namespace')).toContain(
        'is "default" (the default)',
      );
      const matching = build(
        withService(
          [['metadata.namespace', 'product']],
          edit(MINIMAL, [['metadata.namespace', 'product']]),
        ),
      );
      expect(matching.service?.namespace).toBe('product');
      const reserved = expectInvalid(withService([['metadata.namespace', '_system']]));
      expect(messageFor(reserved, 'Service metadata.namespace')).toContain('is reserved');
    });

    it.each<[string, Edit[], string, string]>([
      [
        'a real status',
        [['status', { loadBalancer: { ingress: [{ ip: '192.0.2.1' }] } }]],
        'Service status',
        'is written by the Kubernetes API server',
      ],
      [
        'an unknown top-level field',
        [['extra', {}]],
        'Service extra',
        'podmin supports only Service metadata.name',
      ],
      ['labels', [['metadata.labels', { a: 'b' }]], 'Service metadata.labels', 'is not supported'],
      ['missing name', [['metadata.name', undefined]], 'Service metadata.name', 'is required'],
      ['invalid name', [['metadata.name', 'My_Svc']], 'Service metadata.name', 'DNS-1123 label'],
      ['missing spec', [['spec', undefined]], 'Service spec', 'is required'],
      ['clusterIP', [['spec.clusterIP', 'None']], 'Service spec.clusterIP', 'is not supported'],
      ['NodePort type', [['spec.type', 'NodePort']], 'Service spec.type', 'is not supported'],
      [
        'even type ClusterIP',
        [['spec.type', 'ClusterIP']],
        'Service spec.type',
        'podmin supports only Service metadata.name, metadata.namespace, spec.selector and spec.ports',
      ],
      ['missing selector', [['spec.selector', undefined]], 'Service spec.selector', 'is required'],
      ['empty selector', [['spec.selector', {}]], 'Service spec.selector', 'must not be empty'],
      ['selector list', [['spec.selector', ['a']]], 'Service spec.selector', 'must be a mapping'],
      [
        'non-string selector',
        [['spec.selector', { app: 1 }]],
        'Service spec.selector["app"]',
        'must be a string',
      ],
      ['missing ports', [['spec.ports', undefined]], 'Service spec.ports', 'is required'],
      ['empty ports', [['spec.ports', []]], 'Service spec.ports', 'at least one port'],
      [
        'port 0',
        [['spec.ports', [{ port: 0 }]]],
        'Service spec.ports[0].port',
        'integer from 1 through 65535',
      ],
      [
        'port 65536',
        [['spec.ports', [{ port: 65536 }]]],
        'Service spec.ports[0].port',
        'integer from 1 through 65535',
      ],
      [
        'string port',
        [['spec.ports', [{ port: '80' }]]],
        'Service spec.ports[0].port',
        'integer from 1 through 65535',
      ],
      [
        'missing port',
        [['spec.ports', [{ targetPort: 80 }]]],
        'Service spec.ports[0].port',
        'integer from 1 through 65535',
      ],
      [
        'named targetPort',
        [['spec.ports', [{ port: 80, targetPort: 'http' }]]],
        'Service spec.ports[0].targetPort',
        'named target port "http" is not supported',
      ],
      [
        'targetPort 70000',
        [['spec.ports', [{ port: 80, targetPort: 70000 }]]],
        'Service spec.ports[0].targetPort',
        'integer from 1 through 65535',
      ],
      [
        'SCTP',
        [['spec.ports', [{ port: 80, protocol: 'SCTP' }]]],
        'Service spec.ports[0].protocol',
        'use TCP or UDP',
      ],
      [
        'lowercase tcp',
        [['spec.ports', [{ port: 80, protocol: 'tcp' }]]],
        'Service spec.ports[0].protocol',
        'use TCP or UDP',
      ],
      [
        'nodePort',
        [['spec.ports', [{ port: 80, nodePort: 30080 }]]],
        'Service spec.ports[0].nodePort',
        'is not supported',
      ],
      [
        'duplicate protocol/port',
        [['spec.ports', [{ port: 80 }, { port: 80, protocol: 'TCP', targetPort: 81 }]]],
        'Service spec.ports[1]',
        'TCP/80 is already used by spec.ports[0]',
      ],
      [
        'a port name',
        [['spec.ports', [{ port: 80, name: 'web' }]]],
        'Service spec.ports[0].name',
        'podmin has no named ports',
      ],
      [
        'port entry not a map',
        [['spec.ports', [80]]],
        'Service spec.ports[0]',
        'must be a mapping',
      ],
    ])('rejects %s', (_title, edits, field, message) => {
      expect(messageFor(expectInvalid(withService(edits)), field)).toContain(message);
    });
  });
});

describe('buildDeployment refuses what kubelet would refuse', () => {
  const C = 'spec.template.spec.containers.0';
  const F = 'DaemonSet spec.template.spec.containers[0]';

  it.each([
    [`${C}.ports`, [{ containerPort: -1 }], `${F}.ports[0].containerPort`, /1 through 65535/],
    [`${C}.ports`, [{ containerPort: 99999999 }], `${F}.ports[0].containerPort`, /1 through 65535/],
    [`${C}.ports`, [{ containerPort: 80.5 }], `${F}.ports[0].containerPort`, /integer/],
    [`${C}.ports`, [{}], `${F}.ports[0].containerPort`, /is required/],
    [`${C}.ports`, [{ containerPort: 80, hostPort: 65536 }], `${F}.ports[0].hostPort`, /65535/],
    [`${C}.ports`, [{ containerPort: 80, protocol: 'ICMP' }], `${F}.ports[0].protocol`, /TCP/],
    [`${C}.ports`, [{ containerPort: 80, name: 'Web_Port' }], `${F}.ports[0].name`, /port name/],
    [`${C}.ports`, [{ containerPort: 80, colour: 1 }], `${F}.ports[0].colour`, /ContainerPort/],
    [`${C}.readinessProbe`, { httpGet: { port: -5 } }, `${F}.readinessProbe.httpGet.port`, /65535/],
    [
      `${C}.livenessProbe`,
      { tcpSocket: { port: 0 } },
      `${F}.livenessProbe.tcpSocket.port`,
      /65535/,
    ],
    [`${C}.startupProbe`, { grpc: { port: 'grpc' } }, `${F}.startupProbe.grpc.port`, /integer/],
    [`${C}.readinessProbe`, { httpGet: {} }, `${F}.readinessProbe.httpGet.port`, /required/],
    [
      `${C}.lifecycle`,
      { preStop: { httpGet: { port: 70000 } } },
      `${F}.lifecycle.preStop.httpGet.port`,
      /65535/,
    ],
    [`${C}.resources`, { limits: { cpu: '1e400' } }, `${F}.resources.limits.cpu`, /out of range/],
    [`${C}.resources`, { requests: { cpu: '1n' } }, `${F}.resources.requests.cpu`, /below 1m/],
    [`${C}.resources`, { limits: { memory: '-1' } }, `${F}.resources.limits.memory`, /negative/],
    [`${C}.resources`, { limits: { memory: true } }, `${F}.resources.limits.memory`, /quantity/],
    [
      `${C}.resources`,
      { limits: { 'example.com/gpu': '0.5' } },
      `${F}.resources.limits["example.com/gpu"]`,
      /whole number/,
    ],
    [
      `${C}.resources`,
      { requests: { memory: '2Gi' }, limits: { memory: '1Gi' } },
      `${F}.resources.requests.memory`,
      /must not exceed its limit/,
    ],
    [`${C}.resources`, { limit: {} }, `${F}.resources.limit`, /ResourceRequirements/],
    [
      'spec.template.spec.resources',
      { limits: { cpu: '0.0001' } },
      'DaemonSet spec.template.spec.resources.limits.cpu',
      /below 1m/,
    ],
  ] as const)('refuses %s = %j at %s', (path, value, field, pattern) => {
    const err = expectInvalid(edit(MINIMAL, [[path, value]]));
    expect(messageFor(err, field)).toMatch(pattern);
  });

  it('accepts named probe ports, YAML-number quantities and zero requests', () => {
    const text = edit(MINIMAL, [
      [`${C}.ports`, [{ containerPort: 8443, name: 'https', protocol: 'TCP', hostPort: 0 }]],
      [`${C}.readinessProbe`, { httpGet: { port: 'https' }, periodSeconds: 5 }],
      [`${C}.startupProbe`, { grpc: { port: 9090 } }],
      [
        `${C}.resources`,
        { requests: { cpu: 0, memory: '64Mi' }, limits: { cpu: 1.5, memory: 1073741824 } },
      ],
    ]);
    expect(build(text).pod).toBeDefined();
  });

  it('refuses a Pod payload over MAX_PAYLOAD_BYTES, naming the deployment, size and limit', () => {
    const containers = Array.from({ length: 6000 }, (_, i) => ({
      name: `c${i}`,
      image: 'hello:v1',
    }));
    const err = expectInvalid(edit(MINIMAL, [['spec.template.spec.containers', containers]]));
    expect(err.problems).toHaveLength(1);
    expect(err.problems[0]?.message).toMatch(
      /^deployment workers\/app has a Pod payload of \d+ bytes, over the 1048576-byte limit/,
    );
  });
});

describe('messages name only what is allowed (issue 31)', () => {
  it('lists labels and annotations, never name or namespace, for an unknown template metadata field', () => {
    const err = expectInvalid(edit(MINIMAL, [['spec.template.metadata.generateName', 'x']]));
    const message = messageFor(err, 'DaemonSet spec.template.metadata.generateName');
    expect(message).toBe('is not supported; allowed fields here are: labels, annotations');
  });

  it('still refuses the template name and namespace with their own reason, once each', () => {
    const err = expectInvalid(
      edit(MINIMAL, [
        ['spec.template.metadata.name', 'x'],
        ['spec.template.metadata.namespace', 'y'],
      ]),
    );
    for (const field of ['name', 'namespace']) {
      const path = `DaemonSet spec.template.metadata.${field}`;
      expect(err.problems.filter((p) => p.field === path)).toHaveLength(1);
      expect(messageFor(err, path)).toContain(`from the DaemonSet metadata.${field}`);
    }
  });

  it('refuses appProtocol without an aside about named ports', () => {
    const text = `${MINIMAL}---\n${edit(MINIMAL_SERVICE, [['spec.ports', [{ port: 80, appProtocol: 'http' }]]])}`;
    const message = messageFor(expectInvalid(text), 'Service spec.ports[0].appProtocol');
    expect(message).toBe('is not supported; a Service port has only port, targetPort and protocol');
  });

  it('refuses a port name once, saying podmin has no named ports', () => {
    const text = `${MINIMAL}---\n${edit(MINIMAL_SERVICE, [['spec.ports', [{ port: 80, name: 'web' }]]])}`;
    const err = expectInvalid(text);
    expect(err.problems.filter((p) => p.field === 'Service spec.ports[0].name')).toHaveLength(1);
    expect(messageFor(err, 'Service spec.ports[0].name')).toContain('podmin has no named ports');
  });
});
