import { parseAllDocuments } from 'yaml';
import { daemonSetManifest } from './manifests';

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
});
