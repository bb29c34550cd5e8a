import fs from 'node:fs';
import path from 'node:path';
import { useTempDir } from '@podmin/testing';
import { RecordingReporter } from '@podmin/cli-util-io';
import {
  describeDeployment,
  initManifest,
  prepareDeployment,
  validateManifest,
} from './manifest-commands';

describe('manifest commands', () => {
  const dir = useTempDir('podmin-manifest');

  it('init writes a manifest that validate accepts, and never overwrites', async () => {
    const file = path.join(dir(), 'daemonset.yaml');
    const reporter = new RecordingReporter();
    await initManifest(
      {
        name: 'app',
        nodegroup: 'workers',
        namespace: 'product',
        images: ['web=hello:v1', 'sidecar=side:v1'],
        file,
      },
      reporter,
    );
    const deployment = await validateManifest({ file, images: [] });
    expect(describeDeployment(deployment)).toBe(
      'DaemonSet product/app for NodeGroup workers, no Service',
    );
    expect((deployment.pod['spec'] as { containers: unknown[] }).containers).toHaveLength(2);
    // A zero-downtime rollout: each node starts the new Pod before the old one stops.
    expect(fs.readFileSync(file, 'utf8')).toContain(
      '  updateStrategy:\n    type: RollingUpdate\n    rollingUpdate:\n      maxSurge: 1\n      maxUnavailable: 0\n',
    );
    expect(deployment.strategy).toMatchObject({ maxSurge: 1, maxUnavailable: 0 });
    const before = fs.readFileSync(file, 'utf8');
    await expect(
      initManifest({ name: 'app', nodegroup: 'workers', images: ['hello:v1'], file }, reporter),
    ).rejects.toMatchObject({ code: 'ALREADY_EXISTS' });
    expect(fs.readFileSync(file, 'utf8')).toBe(before);
  });

  it('deploy without --file commits the zero-downtime strategy in the Pod payload', async () => {
    const deployment = await prepareDeployment({
      name: 'app',
      nodegroup: 'workers',
      images: ['hello:v1'],
      service: true,
    });
    expect(deployment.pod['metadata']).toMatchObject({
      annotations: {
        'podmin.dev/rollout':
          '{"type":"RollingUpdate","maxUnavailable":0,"maxSurge":1,"minReadySeconds":0,"progressDeadlineSeconds":300}',
        'podmin.dev/service': 'app',
      },
    });
  });

  it('init requires an image', async () => {
    await expect(
      initManifest(
        { name: 'app', nodegroup: 'workers', images: [], file: path.join(dir(), 'x.yaml') },
        new RecordingReporter(),
      ),
    ).rejects.toThrow(/--image/);
    expect(fs.existsSync(path.join(dir(), 'x.yaml'))).toBe(false);
  });

  it('deploy rejects built-in-only flags with --file, naming each', async () => {
    await expect(
      prepareDeployment({
        name: 'app',
        nodegroup: 'w',
        images: [],
        file: path.join(dir(), 'f.yaml'),
        ports: ['80:8080'],
        cpu: '1',
        memory: '1Gi',
        namespace: 'x',
      }),
    ).rejects.toThrow(/--port[\s\S]*--cpu[\s\S]*--memory[\s\S]*--namespace/);
  });

  it('deploy builds the built-in manifest with ports, limits and a TCP probe', async () => {
    const d = await prepareDeployment({
      name: 'api',
      nodegroup: 'w',
      images: ['api:v2'],
      service: true,
      ports: ['80:8080,81:8081'],
      cpu: '500m',
      memory: '256Mi',
    });
    expect(describeDeployment(d)).toBe(
      'DaemonSet default/api for NodeGroup w, Service api (80→8080/TCP, 81→8081/TCP)',
    );
    const container = (d.pod['spec'] as { containers: Array<Record<string, unknown>> })
      .containers[0];
    expect(container).toMatchObject({
      readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 },
      resources: { limits: { cpu: '500m', memory: '256Mi' } },
    });
  });

  it('validate reports an unreadable file by name', async () => {
    await expect(
      validateManifest({ file: path.join(dir(), 'absent.yaml'), images: [] }),
    ).rejects.toThrow(/absent\.yaml: no such file/);
  });
});
