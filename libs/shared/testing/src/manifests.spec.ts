import { parseAllDocuments } from 'yaml';
import { daemonSetManifest, daemonSetYaml } from './manifests';

const parse = (text: string): unknown[] => parseAllDocuments(text).map((d) => d.toJS() as unknown);

describe('daemonSetManifest', () => {
  it('writes a DaemonSet with the secret annotation and a Service when asked', () => {
    const docs = parse(
      daemonSetManifest({ name: 'api', image: 'api:v2', secret: 'token', servicePort: 443 }),
    );
    expect(docs).toEqual([
      expect.objectContaining({
        kind: 'DaemonSet',
        spec: expect.objectContaining({
          template: {
            metadata: {
              labels: { app: 'api' },
              annotations: { 'podmin.dev/aws-parameter-store': 'token' },
            },
            spec: {
              nodeSelector: { 'podmin.dev/nodegroup': 'default' },
              containers: [{ name: 'api', image: 'api:v2' }],
            },
          },
        }),
      }),
      expect.objectContaining({
        kind: 'Service',
        spec: { selector: { app: 'api' }, ports: [{ port: 443, targetPort: 8443 }] },
      }),
    ]);
  });

  it('writes the DaemonSet alone by default', () => {
    expect(parse(daemonSetManifest())).toEqual([
      expect.objectContaining({
        metadata: { name: 'web', namespace: 'product' },
        spec: expect.objectContaining({
          template: expect.objectContaining({ metadata: { labels: { app: 'web' } } }),
        }),
      }),
    ]);
  });

  it('writes several containers and init containers in order, and a Service selecting another app', () => {
    const [daemonSet, service] = parse(
      daemonSetManifest({
        containers: { web: 'web:v1', sidecar: 'sidecar:v1' },
        initContainers: { setup: 'web:v2' },
        secret: 'present,absent',
        servicePort: 80,
        serviceSelector: 'other',
      }),
    ) as Array<{ spec: Record<string, unknown> }>;
    expect(daemonSet?.spec['template']).toEqual({
      metadata: {
        labels: { app: 'web' },
        annotations: { 'podmin.dev/aws-parameter-store': 'present,absent' },
      },
      spec: {
        nodeSelector: { 'podmin.dev/nodegroup': 'default' },
        initContainers: [{ name: 'setup', image: 'web:v2' }],
        containers: [
          { name: 'web', image: 'web:v1' },
          { name: 'sidecar', image: 'sidecar:v1' },
        ],
      },
    });
    expect(service?.spec['selector']).toEqual({ app: 'other' });
  });
});

describe('daemonSetYaml', () => {
  it('writes the same objects as daemonSetManifest, in block style', () => {
    const text = daemonSetYaml({
      namespace: 'product',
      containers: { web: 'web:v1', sidecar: 'sidecar:v1' },
      annotations: { 'podmin.dev/aws-parameter-store': 'token' },
      service: { selector: 'other', ports: [{ port: 443, targetPort: 8443 }] },
    });
    expect(parse(text)).toEqual(
      parse(
        daemonSetManifest({
          containers: { web: 'web:v1', sidecar: 'sidecar:v1' },
          secret: 'token',
          servicePort: 443,
          serviceSelector: 'other',
        }),
      ),
    );
    expect(text).toContain('\n      containers:\n        - name: web\n          image: web:v1\n');
    expect(text).not.toContain('{');
  });

  it('leaves metadata without a namespace unless given one', () => {
    const [daemonSet, service] = parse(
      daemonSetYaml({ name: 'api', service: { name: 'front', ports: [{ port: 80 }] } }),
    );
    expect(daemonSet).toMatchObject({ metadata: { name: 'api' } });
    expect(service).toMatchObject({
      metadata: { name: 'front' },
      spec: { selector: { app: 'api' } },
    });
    expect(daemonSetYaml()).not.toContain('namespace');
  });
});
