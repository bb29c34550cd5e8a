import { daemonSetWithPodSpec, problemsOf } from './__fixtures__/daemonset';
import { STATIC_POD_REFUSALS } from './static-pod-fields';

const SPEC = 'DaemonSet spec.template.spec';

const daemonSet = (podSpec: Record<string, unknown>): string => daemonSetWithPodSpec(podSpec);

const container = (extra: Record<string, unknown>) => [
  { name: 'app', image: 'hello:v1', ...extra },
];
const volume = (extra: Record<string, unknown>) => [{ name: 'v', ...extra }];
const projected = (source: Record<string, unknown>) =>
  volume({ projected: { sources: [{ downwardAPI: { items: [] } }, source] } });

/** Per table row: a Pod spec using the field, and the concrete path the refusal must name. */
const SAMPLES: Record<string, [Record<string, unknown>, string]> = {
  serviceAccountName: [{ serviceAccountName: 'node-exporter' }, 'serviceAccountName'],
  serviceAccount: [{ serviceAccount: 'node-exporter' }, 'serviceAccount'],
  automountServiceAccountToken: [
    { automountServiceAccountToken: true },
    'automountServiceAccountToken',
  ],
  imagePullSecrets: [{ imagePullSecrets: [{ name: 'regcred' }] }, 'imagePullSecrets'],
  'volumes[].configMap': [
    { volumes: volume({ configMap: { name: 'config' } }) },
    'volumes[0].configMap',
  ],
  'volumes[].secret': [{ volumes: volume({ secret: { secretName: 'tls' } }) }, 'volumes[0].secret'],
  'volumes[].persistentVolumeClaim': [
    { volumes: volume({ persistentVolumeClaim: { claimName: 'data' } }) },
    'volumes[0].persistentVolumeClaim',
  ],
  'volumes[].ephemeral': [
    { volumes: volume({ ephemeral: { volumeClaimTemplate: { spec: {} } } }) },
    'volumes[0].ephemeral',
  ],
  'volumes[].csi': [
    { volumes: volume({ csi: { driver: 'secrets-store.csi.k8s.io' } }) },
    'volumes[0].csi',
  ],
  'volumes[].projected.sources[].serviceAccountToken': [
    { volumes: projected({ serviceAccountToken: { audience: 'istio-ca', path: 'token' } }) },
    'volumes[0].projected.sources[1].serviceAccountToken',
  ],
  'volumes[].projected.sources[].configMap': [
    { volumes: projected({ configMap: { name: 'kube-root-ca.crt' } }) },
    'volumes[0].projected.sources[1].configMap',
  ],
  'volumes[].projected.sources[].secret': [
    { volumes: projected({ secret: { name: 'tls' } }) },
    'volumes[0].projected.sources[1].secret',
  ],
  'volumes[].projected.sources[].clusterTrustBundle': [
    { volumes: projected({ clusterTrustBundle: { name: 'ca', path: 'ca.pem' } }) },
    'volumes[0].projected.sources[1].clusterTrustBundle',
  ],
  'volumes[].projected.sources[].podCertificate': [
    { volumes: projected({ podCertificate: { signerName: 'example.com/s', keyType: 'ED25519' } }) },
    'volumes[0].projected.sources[1].podCertificate',
  ],
  'containers[].env[].valueFrom.secretKeyRef': [
    {
      containers: container({
        env: [
          { name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
          { name: 'API_KEY', valueFrom: { secretKeyRef: { name: 'dd', key: 'api-key' } } },
        ],
      }),
    },
    'containers[0].env[1].valueFrom.secretKeyRef',
  ],
  'containers[].env[].valueFrom.configMapKeyRef': [
    {
      initContainers: container({
        name: 'init',
        env: [{ name: 'LEVEL', valueFrom: { configMapKeyRef: { name: 'c', key: 'level' } } }],
      }),
    },
    'initContainers[0].env[0].valueFrom.configMapKeyRef',
  ],
  'containers[].envFrom[].secretRef': [
    { containers: container({ envFrom: [{ secretRef: { name: 'creds' } }] }) },
    'containers[0].envFrom[0].secretRef',
  ],
  'containers[].envFrom[].configMapRef': [
    { containers: container({ envFrom: [{ configMapRef: { name: 'settings' } }] }) },
    'containers[0].envFrom[0].configMapRef',
  ],
  resourceClaims: [
    { resourceClaims: [{ name: 'gpu', resourceClaimName: 'gpu' }] },
    'resourceClaims',
  ],
  'containers[].resources.claims': [
    { containers: container({ resources: { claims: [{ name: 'gpu' }] } }) },
    'containers[0].resources.claims',
  ],
  dnsPolicy: [{ dnsPolicy: 'Default' }, 'dnsPolicy'],
  'dnsConfig.nameservers': [
    { dnsConfig: { nameservers: ['2001:db8::53'] } },
    'dnsConfig.nameservers',
  ],
  readinessGates: [{ readinessGates: [{ conditionType: 'example.com/ready' }] }, 'readinessGates'],
};

describe('Pod fields a static Pod cannot honour (issue 31)', () => {
  it('has a sample for every row of the table, and no sample without a row', () => {
    expect(Object.keys(SAMPLES).sort()).toEqual(STATIC_POD_REFUSALS.map((r) => r.field).sort());
  });

  it.each(STATIC_POD_REFUSALS.map((row) => [row.field, row] as const))(
    'refuses %s naming the field, why and the podmin way',
    (field, row) => {
      const sample = SAMPLES[field];
      if (sample === undefined) throw new Error(`no sample for ${field}`);
      const [podSpec, path] = sample;
      const problems = problemsOf(daemonSet(podSpec));
      expect(problems).toEqual([
        {
          field: `${SPEC}.${path}`,
          message: `cannot be used: ${row.why}; instead, ${row.instead}`,
        },
      ]);
    },
  );

  it('says why in the words of the issue and always names a podmin way', () => {
    for (const row of STATIC_POD_REFUSALS) {
      expect(row.instead.length).toBeGreaterThan(20);
      if (row.field.startsWith('dns')) {
        // The node's DNS (DESIGN §6.26): the spec's cluster DNS, which the value would bypass.
        expect(row.why).toMatch(/^every podmin Pod resolves through the cluster DNS/);
      } else if (row.field !== 'volumes[].csi') {
        expect(row.why).toMatch(/^static Pods cannot refer to API objects/);
      }
    }
  });

  it('accepts what kubelet resolves on the node: fieldRef, resourceFieldRef, downwardAPI and false', () => {
    const problems = problemsOf(
      daemonSet({
        automountServiceAccountToken: false,
        containers: container({
          env: [
            { name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
            {
              name: 'MEM',
              valueFrom: { resourceFieldRef: { resource: 'limits.memory' } },
            },
            { name: 'PLAIN', value: 'x' },
          ],
        }),
        volumes: [
          { name: 'labels', downwardAPI: { items: [] } },
          { name: 'info', projected: { sources: [{ downwardAPI: { items: [] } }] } },
          { name: 'host', hostPath: { path: '/proc' } },
          { name: 'scratch', emptyDir: { sizeLimit: '1Gi' } },
        ],
      }),
    );
    expect(problems).toEqual([]);
  });

  it('names every occurrence, in regular and init containers alike', () => {
    const secretEnv = { name: 'K', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } };
    const problems = problemsOf(
      daemonSet({
        containers: [
          { name: 'a', image: 'hello:v1', env: [secretEnv, secretEnv] },
          { name: 'b', image: 'hello:v1', env: [secretEnv] },
        ],
        initContainers: [{ name: 'c', image: 'hello:v1', env: [secretEnv] }],
      }),
    );
    expect(problems.map((p) => p.field)).toEqual([
      `${SPEC}.containers[0].env[0].valueFrom.secretKeyRef`,
      `${SPEC}.containers[0].env[1].valueFrom.secretKeyRef`,
      `${SPEC}.containers[1].env[0].valueFrom.secretKeyRef`,
      `${SPEC}.initContainers[0].env[0].valueFrom.secretKeyRef`,
    ]);
  });
});
