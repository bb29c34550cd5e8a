import { declaredSecrets, deploymentRevision, transformPod, type PodObject } from './pod-transform';

const pod = (annotations: Record<string, string> = {}): PodObject => ({
  metadata: { name: 'web', annotations },
  spec: {
    containers: [
      {
        name: 'app',
        volumeMounts: [
          {
            name: 'podmin-workload-identity',
            mountPath: '/var/run/secrets/podmin.dev/tls',
            readOnly: true,
          },
        ],
      },
    ],
    initContainers: [{ name: 'init' }],
    volumes: [
      {
        name: 'podmin-workload-identity',
        hostPath: { path: '/run/podmin/workloads/web/identity', type: 'Directory' },
      },
    ],
  },
});

describe('declaredSecrets', () => {
  it('reads both providers and rejects unsafe keys', () => {
    expect(
      declaredSecrets(
        pod({
          'podmin.dev/aws-parameter-store': 'b, a,a',
          'podmin.dev/aws-secrets-manager': 'token',
        }),
      ),
    ).toEqual(
      new Map([
        ['aws-parameter-store', ['a', 'b']],
        ['aws-secrets-manager', ['token']],
      ]),
    );
    expect(() => declaredSecrets(pod({ 'podmin.dev/aws-parameter-store': '../etc' }))).toThrow(
      /safe single path component/,
    );
  });
});

describe('transformPod', () => {
  it('roots host paths under the node root and mounts secrets read-only into every container', () => {
    const out = transformPod({
      pod: pod(),
      revision: 'r1',
      identityFingerprint: 'f1',
      root: '/srv/node',
      workloads: '/srv/node/run/podmin/workloads',
      nodeAddress: '2600::1',
      secretProviders: ['aws-secrets-manager'],
    });
    expect(out.metadata).toMatchObject({
      namespace: 'default',
      annotations: { 'podmin.dev/revision': 'r1', 'podmin.dev/identity-revision': 'f1' },
    });
    expect(out.spec.volumes).toEqual([
      {
        name: 'podmin-workload-identity',
        hostPath: { path: '/srv/node/run/podmin/workloads/web/identity', type: 'Directory' },
      },
      {
        name: 'podmin-aws-secrets-manager',
        hostPath: {
          path: '/srv/node/run/podmin/workloads/web/secrets/r1/aws-secrets-manager',
          type: 'Directory',
        },
      },
    ]);
    for (const c of [...out.spec.containers, ...(out.spec.initContainers ?? [])]) {
      expect(c.volumeMounts).toContainEqual({
        name: 'podmin-aws-secrets-manager',
        mountPath: '/var/run/podmin/aws-secrets-manager',
        readOnly: true,
      });
    }
    expect(out.spec['dnsConfig']).toEqual({
      nameservers: ['2600::1'],
      searches: ['default.svc.cluster.local', 'svc.cluster.local', 'cluster.local'],
    });
  });

  it('derives the revision from both payload paths', () => {
    expect(deploymentRevision('p', 's')).not.toBe(deploymentRevision('p', undefined));
    expect(deploymentRevision('p', 's')).toBe(deploymentRevision('p', 's'));
  });
});
