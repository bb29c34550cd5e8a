import fs from 'node:fs';
import path from 'node:path';
import { captureError } from './__fixtures__/capture-error';
import { minimalDaemonSet } from './__fixtures__/daemonset';
import { buildDeployment } from './deployment';
import { isEmptyServerValue } from './server-fields';

const FIXTURES = path.join(__dirname, '__fixtures__', 'kubectl');
const read = (name: string): string => fs.readFileSync(path.join(FIXTURES, name), 'utf8');

const refusal = (text: string) => captureError(() => buildDeployment(text, { source: 'app.yaml' }));

const MINIMAL = minimalDaemonSet({ name: 'web', container: 'hello' });

describe("kubectl's server-populated fields (issue 31)", () => {
  it('accepts a kubectl dry-run manifest and drops its empty fields, with no warning', () => {
    const deployment = buildDeployment(read('dry-run.yaml'), { source: 'dry-run.yaml' });
    expect(deployment.warnings).toEqual([]);
    expect(deployment.name).toBe('web');
    expect(deployment.podYaml).not.toContain('creationTimestamp');
    expect(deployment.podYaml).not.toContain('status');
    expect(deployment.service?.object).toEqual({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: 'default' },
      spec: { selector: { app: 'web' }, ports: [{ port: 80, protocol: 'TCP', targetPort: 8080 }] },
    });
  });

  it('commits the same Pod payload as the manifest without the empty fields', () => {
    const withFields = buildDeployment(read('dry-run.yaml').split('---')[0] as string, {
      source: 'a.yaml',
    });
    const resources = { containers: [{ name: 'hello', image: 'hello:v1', resources: {} }] };
    const without = buildDeployment(
      minimalDaemonSet({ name: 'web', container: 'hello', podSpec: resources }),
      { source: 'b.yaml' },
    );
    expect(withFields.podYaml).toBe(without.podYaml);
  });

  it('refuses a real status and real server metadata, naming each field', () => {
    const err = refusal(read('get-with-status.yaml'));
    const fields = err.problems.map((p) => p.field).sort();
    expect(fields).toEqual([
      'DaemonSet metadata.creationTimestamp',
      'DaemonSet metadata.generation',
      'DaemonSet metadata.resourceVersion',
      'DaemonSet metadata.uid',
      'DaemonSet status',
    ]);
    const status = err.problems.find((p) => p.field === 'DaemonSet status');
    expect(status?.message).toBe(
      "is written by the Kubernetes API server, and podmin has none; remove it (kubectl's empty status: {} is accepted and dropped)",
    );
  });

  it.each([
    ['metadata.generation: 0', MINIMAL.replace('  name: web\n', '  name: web\n  generation: 0\n')],
    [
      'metadata.resourceVersion: ""',
      MINIMAL.replace('  name: web\n', '  name: web\n  resourceVersion: ""\n'),
    ],
    [
      'metadata.managedFields: []',
      MINIMAL.replace('  name: web\n', '  name: web\n  managedFields: []\n'),
    ],
    ['status: {}', `${MINIMAL}status: {}\n`],
    ['status: null', `${MINIMAL}status:\n`],
  ])('accepts the empty %s', (_title, text) => {
    expect(buildDeployment(text, { source: 'app.yaml' }).warnings).toEqual([]);
  });

  it.each([
    ['metadata.generation', MINIMAL.replace('  name: web\n', '  name: web\n  generation: 1\n')],
    [
      'metadata.resourceVersion',
      MINIMAL.replace('  name: web\n', '  name: web\n  resourceVersion: "12"\n'),
    ],
    [
      'spec.template.metadata.creationTimestamp',
      MINIMAL.replace(
        '    metadata:\n      labels:',
        '    metadata:\n      creationTimestamp: "2026-01-01T00:00:00Z"\n      labels:',
      ),
    ],
    ['status', `${MINIMAL}status:\n  numberReady: 1\n`],
  ])('refuses a non-empty %s once', (field, text) => {
    const err = refusal(text);
    expect(err.problems.filter((p) => p.field === `DaemonSet ${field}`)).toHaveLength(1);
    expect(err.problems).toHaveLength(1);
  });

  it('refuses a Service status with a load balancer ingress', () => {
    const text = `${MINIMAL}---\n${read('dry-run.yaml').split('---')[1]?.replace('loadBalancer: {}', 'loadBalancer:\n    ingress:\n    - ip: 192.0.2.1')}`;
    const err = refusal(text);
    expect(err.problems.map((p) => p.field)).toEqual(['Service status']);
  });

  it('judges emptiness deeply, and 0 only where asked', () => {
    expect(isEmptyServerValue({ loadBalancer: {} })).toBe(true);
    expect(isEmptyServerValue([{}, null, ''])).toBe(true);
    expect(isEmptyServerValue({ numberReady: 0 })).toBe(false);
    expect(isEmptyServerValue(0, true)).toBe(true);
    expect(isEmptyServerValue('x')).toBe(false);
  });
});
