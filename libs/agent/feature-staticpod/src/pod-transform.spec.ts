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

  const transform = (spec: Record<string, unknown>, namespace?: string): PodObject => {
    const input = pod();
    Object.assign(input.spec, spec);
    if (namespace !== undefined) input.metadata.namespace = namespace;
    return transformPod({
      pod: input,
      revision: 'r1',
      identityFingerprint: 'f1',
      root: '/',
      workloads: '/run/podmin/workloads',
      nodeAddress: '2600::1',
      secretProviders: [],
    });
  };

  it('keeps dnsConfig.options ndots "2" next to the node DNS server and search list', () => {
    const out = transform({ dnsConfig: { options: [{ name: 'ndots', value: '2' }] } }, 'product');
    expect(out.spec['dnsPolicy']).toBe('None');
    expect(out.spec['dnsConfig']).toEqual({
      nameservers: ['2600::1'],
      searches: ['product.svc.cluster.local', 'svc.cluster.local', 'cluster.local'],
      options: [{ name: 'ndots', value: '2' }],
    });
  });

  it('merges every option and appends searches after the cluster ones', () => {
    const out = transform({
      dnsPolicy: 'ClusterFirst',
      dnsConfig: {
        options: [
          { name: 'ndots', value: '2' },
          { name: 'timeout', value: '1' },
          { name: 'edns0' },
        ],
        searches: ['corp.example.com', 'cluster.local'],
      },
    });
    expect(out.spec['dnsPolicy']).toBe('None');
    expect(out.spec['dnsConfig']).toEqual({
      nameservers: ['2600::1'],
      searches: [
        'default.svc.cluster.local',
        'svc.cluster.local',
        'cluster.local',
        'corp.example.com',
      ],
      options: [{ name: 'ndots', value: '2' }, { name: 'timeout', value: '1' }, { name: 'edns0' }],
    });
  });

  it("writes no options for a Pod without them, so existing Pods' manifests do not change", () => {
    expect(
      transform({ dnsPolicy: 'ClusterFirstWithHostNet', hostNetwork: true }).spec['dnsConfig'],
    ).toEqual({
      nameservers: ['2600::1'],
      searches: ['default.svc.cluster.local', 'svc.cluster.local', 'cluster.local'],
    });
  });

  it("replaces an older payload's dnsPolicy and nameservers, which validate now refuses", () => {
    const out = transform({
      dnsPolicy: 'Default',
      dnsConfig: { nameservers: ['1.1.1.1'], options: [{ name: 'ndots', value: '3' }] },
    });
    expect(out.spec['dnsPolicy']).toBe('None');
    expect(out.spec['dnsConfig']).toMatchObject({
      nameservers: ['2600::1'],
      options: [{ name: 'ndots', value: '3' }],
    });
  });

  it('derives the revision from both payload paths', () => {
    expect(deploymentRevision('p', 's')).not.toBe(deploymentRevision('p', undefined));
    expect(deploymentRevision('p', 's')).toBe(deploymentRevision('p', 's'));
  });
});
