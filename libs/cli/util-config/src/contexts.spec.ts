import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hasCode } from '@podmin/util-errors';
import { ContextStore, parseConfig, type ClusterContext } from './contexts';

/** The CLI's built-in provider names, as its registry lists them. */
const PROVIDER_NAMES = ['aws', 'local'];

const ctx = (cluster: string): ClusterContext => ({
  cluster,
  provider: 'local',
  region: 'local',
  bucket: `/tmp/${cluster}`,
  secretsProvider: 'aws-parameter-store',
});

describe('ContextStore', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-config-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('treats a missing file as empty and reports no current context', async () => {
    const store = new ContextStore(path.join(dir, 'config'), PROVIDER_NAMES);
    expect(await store.read()).toEqual({ contexts: {} });
    await expect(store.current()).rejects.toMatchObject({ code: 'NO_CONTEXT' });
  });

  it('writes 0600 files atomically and keeps every concurrent update', async () => {
    const store = new ContextStore(path.join(dir, 'config'), PROVIDER_NAMES);
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        new ContextStore(path.join(dir, 'config'), PROVIDER_NAMES).update((c) => ({
          current: `c${i}`,
          contexts: { ...c.contexts, [`c${i}`]: ctx(`c${i}`) },
        })),
      ),
    );
    const config = await store.read();
    expect(Object.keys(config.contexts)).toHaveLength(10);
    expect(fs.statSync(store.file).mode & 0o777).toBe(0o600);
    expect(
      fs
        .readdirSync(path.join(dir, 'config'))
        .filter((f) => f.endsWith('.tmp') || f.endsWith('.lock')),
    ).toEqual([]);
    expect((await store.current()).cluster).toBe(config.current);
  });

  it('lists every bad field of a corrupt config', () => {
    const text = JSON.stringify({
      current: 'nope',
      extra: 1,
      contexts: {
        a: {
          cluster: 'b',
          provider: 'gcp',
          region: '',
          bucket: 'x',
          secretsProvider: 'vault',
          colour: 'red',
        },
      },
    });
    let caught: unknown;
    try {
      parseConfig(text, 'config.json', PROVIDER_NAMES);
    } catch (err) {
      caught = err;
    }
    expect(hasCode(caught, 'INVALID_ARGUMENT')).toBe(true);
    const message = String((caught as Error).message);
    for (const field of [
      'extra',
      'contexts.a.colour',
      'contexts.a.cluster',
      'contexts.a.provider',
      'contexts.a.region',
      'contexts.a.secretsProvider',
      'current',
    ]) {
      expect(message).toContain(`${field}:`);
    }
    expect(() => parseConfig('{', 'config.json', PROVIDER_NAMES)).toThrow(/not valid JSON/);
  });
});
