import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RecordingReporter } from '@podmin/cli-util-io';
import { LocalDirectoryObjectStore } from '@podmin/data-access-object-store';
import {
  INDEX_KEY,
  parseIndex,
  podPayloadKey,
  servicePayloadKey,
} from '@podmin/util-desired-state';
import { PodminError } from '@podmin/util-errors';
import type { Deployment } from '@podmin/util-manifest';
import { DEFAULT_STRATEGY } from '@podmin/util-rollout';
import { deploy, deploymentPayloads } from './deploy';

const podYaml = 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  namespace: product\n';
const prepared: Deployment = {
  name: 'web',
  namespace: 'product',
  nodegroup: 'default',
  pod: { kind: 'Pod' },
  podYaml,
  service: { name: 'frontend', namespace: 'product', object: {}, yaml: 'kind: Service\n' },
  strategy: DEFAULT_STRATEGY,
  warnings: ['container web has no memory limit'],
};

describe('deploy', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-deploy-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("commits a prepared deployment's payloads and reports it", async () => {
    const store = new LocalDirectoryObjectStore(dir);
    const reporter = new RecordingReporter();
    const deps = {
      prepare: () => Promise.resolve(prepared),
      openBucket: () => Promise.resolve({ context: { cluster: 'demo' }, store }),
      reporter,
    };
    const result = await deploy(deps);
    expect(result).toMatchObject({ key: 'default/web', changed: true, repaired: [] });
    const index = parseIndex((await store.get(INDEX_KEY)).body);
    expect(index['default/web']).toEqual({
      pod: podPayloadKey('default', podYaml),
      service: servicePayloadKey('product', 'frontend', 'kind: Service\n'),
    });
    expect((await store.get(podPayloadKey('default', podYaml))).body.toString()).toBe(podYaml);
    expect(reporter.warnings).toEqual(['container web has no memory limit']);
    expect(reporter.results).toEqual(['default/web']);
    expect(reporter.infos[0]).toMatch(/^Committed: default\/web in cluster demo desired state\./);

    const again = await deploy(deps);
    expect(again.changed).toBe(false);
    expect(reporter.infos[1]).toMatch(/^Already committed \(unchanged\): default\/web/);
  });

  it('opens no bucket when preparation fails', async () => {
    let opened = false;
    const refused = new PodminError('INVALID_ARGUMENT', 'deploy: bad manifest');
    await expect(
      deploy({
        prepare: () => Promise.reject(refused),
        openBucket: () => {
          opened = true;
          return Promise.reject(new Error('unreachable'));
        },
        reporter: new RecordingReporter(),
      }),
    ).rejects.toBe(refused);
    expect(opened).toBe(false);
  });

  it('maps a deployment without a Service to a Pod payload alone', () => {
    const podOnly: Deployment = { ...prepared };
    delete podOnly.service;
    expect(deploymentPayloads(podOnly)).toEqual({ name: 'web', nodegroup: 'default', podYaml });
  });
});
