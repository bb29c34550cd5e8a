import { InMemoryObjectStore, commitDesiredState } from '@podmin/testing';
import { servicePayloadKey } from '@podmin/util-desired-state';
import { PodminError } from '@podmin/util-errors';
import { RecordingLog } from '../__fixtures__/recording-log';
import { serviceYaml } from '../__fixtures__/snapshot-fixtures';
import { readDesiredServices } from './read-desired-services';

const POD = (name: string): string =>
  [
    'apiVersion: v1',
    'kind: Pod',
    'metadata:',
    `  name: ${name}`,
    '  namespace: shop',
    '  labels:',
    `    app: ${name}`,
    'spec:',
    '  containers:',
    `  - name: ${name}`,
    '    image: registry.podmin.internal/shop/web@sha256:' + 'a'.repeat(64),
    '',
  ].join('\n');

function deployment(nodegroup: string, name: string, namespace = 'shop') {
  return {
    name,
    nodegroup,
    podYaml: POD(name),
    service: { name, namespace, yaml: serviceYaml(namespace, name, { app: name }) },
  };
}

describe('readDesiredServices', () => {
  it('reads the Services of every NodeGroup', async () => {
    const store = new InMemoryObjectStore();
    await commitDesiredState(store, {
      deploy: [deployment('web', 'front'), deployment('db', 'postgres'), deployment('db', 'cache')],
    });
    const result = await readDesiredServices(store);
    expect(result.services.map((s) => `${s.namespace}/${s.name}`).sort()).toEqual([
      'shop/cache',
      'shop/front',
      'shop/postgres',
    ]);
    expect(result.skipped).toEqual([]);
    expect(result.version).toBe(store.objects.get('deployments/index.json')?.etag);
  });

  it('gives no Services for an absent index', async () => {
    expect(await readDesiredServices(new InMemoryObjectStore())).toEqual({
      version: null,
      services: [],
      skipped: [],
      entries: {},
    });
  });

  it('skips and reports a tampered or missing payload without failing the others', async () => {
    const store = new InMemoryObjectStore();
    await commitDesiredState(store, { deploy: [deployment('web', 'front')] });
    const yaml = serviceYaml('shop', 'evil', { app: 'evil' });
    const tampered = servicePayloadKey('shop', 'evil', yaml);
    store.store(tampered, yaml.replace('app: evil', 'app: front'));
    const missing = servicePayloadKey('shop', 'gone', serviceYaml('shop', 'gone', { app: 'gone' }));
    const pod = [...store.objects.keys()].find((k) => k.startsWith('nodegroups/web/pods/'));
    await commitDesiredState(store, {
      entries: {
        'web/evil': { pod: pod as string, service: tampered },
        'web/gone': { pod: pod as string, service: missing },
      },
    });
    const log = new RecordingLog();
    const result = await readDesiredServices(store, { log });
    expect(result.services.map((s) => s.name)).toEqual(['front']);
    expect(result.skipped.map((s) => [s.key, s.entries, s.code])).toEqual(
      [
        [tampered, ['web/evil'], 'INTERNAL'],
        [missing, ['web/gone'], 'OBJECT_NOT_FOUND'],
      ].sort((a, b) => ((a[0] as string) < (b[0] as string) ? -1 : 1)),
    );
    expect(result.skipped.find((s) => s.key === tampered)?.message).toMatch(/hashes to/);
    expect(log.lines.filter((l) => l.msg === 'skip Service payload')).toHaveLength(2);
  });

  it('fails as a whole when the bucket is unavailable', async () => {
    const store = new InMemoryObjectStore();
    await commitDesiredState(store, { deploy: [deployment('web', 'front')] });
    const get = store.get.bind(store);
    store.get = (key, options) =>
      key.startsWith('services/')
        ? Promise.reject(new PodminError('BUCKET_UNAVAILABLE', `reading ${key}: timeout`))
        : get(key, options);
    await expect(readDesiredServices(store)).rejects.toMatchObject({ code: 'BUCKET_UNAVAILABLE' });
  });

  it('keeps at most `concurrency` payload reads in flight', async () => {
    const store = new InMemoryObjectStore();
    await commitDesiredState(store, {
      deploy: Array.from({ length: 12 }, (_, i) => deployment(`ng${i % 3}`, `svc-${i}`)),
    });
    const get = store.get.bind(store);
    let inFlight = 0;
    let peak = 0;
    store.get = async (key, options) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await new Promise((resolve) => setImmediate(resolve));
      inFlight--;
      return get(key, options);
    };
    const result = await readDesiredServices(store, { concurrency: 3 });
    expect(result.services).toHaveLength(12);
    expect(peak).toBe(3);
  });
});
