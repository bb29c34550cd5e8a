import fs from 'node:fs';
import path from 'node:path';
import { useTempDir } from '@podmin/testing';
import { hasCode } from '@podmin/util-errors';
import {
  ContextStore,
  chooseContext,
  parseConfig,
  resolveContext,
  type ClusterContext,
  type PodminConfig,
} from './contexts';
import { readCliEnvironment } from './env';

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
  const dir = useTempDir('podmin-config');

  it('treats a missing file as empty and reports no current context', async () => {
    const store = new ContextStore(path.join(dir(), 'config'), PROVIDER_NAMES);
    expect(await store.read()).toEqual({ contexts: {} });
    await expect(store.current()).rejects.toMatchObject({ code: 'NO_CONTEXT' });
  });

  it('writes 0600 files atomically and keeps every concurrent update', async () => {
    const store = new ContextStore(path.join(dir(), 'config'), PROVIDER_NAMES);
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        new ContextStore(path.join(dir(), 'config'), PROVIDER_NAMES).update((c) => ({
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
        .readdirSync(path.join(dir(), 'config'))
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

describe('choosing the context of one invocation', () => {
  const config: PodminConfig = {
    current: 'saved',
    contexts: { flagged: ctx('flagged'), saved: ctx('saved'), variable: ctx('variable') },
  };

  it('takes --context over PODMIN_CONTEXT over the saved current context', () => {
    expect(resolveContext(config, chooseContext('flagged', 'variable')).cluster).toBe('flagged');
    expect(resolveContext(config, chooseContext(undefined, 'variable')).cluster).toBe('variable');
    expect(resolveContext(config, chooseContext(undefined, undefined)).cluster).toBe('saved');
    // An empty flag or variable counts as unset.
    expect(resolveContext(config, chooseContext('', '')).cluster).toBe('saved');
    expect(chooseContext('a', 'b')).toEqual({ name: 'a', source: '--context' });
    expect(chooseContext(undefined, 'b')).toEqual({ name: 'b', source: 'PODMIN_CONTEXT' });
  });

  it('reads PODMIN_CONTEXT from the environment, ignoring an empty value', () => {
    expect(readCliEnvironment({ PODMIN_CONTEXT: 'variable' }).context).toBe('variable');
    expect(readCliEnvironment({ PODMIN_CONTEXT: '' }).context).toBeUndefined();
  });

  it('names an unknown chosen context, where it came from and the known ones', () => {
    let caught: unknown;
    try {
      resolveContext(config, chooseContext(undefined, 'nope'));
    } catch (err) {
      caught = err;
    }
    expect(hasCode(caught, 'CONTEXT_NOT_FOUND')).toBe(true);
    expect((caught as Error).message).toBe(
      'using context "nope" (from PODMIN_CONTEXT): no such context; known contexts: flagged, saved, variable',
    );
    // Inherited properties are no contexts.
    expect(() => resolveContext(config, chooseContext('toString', undefined))).toThrow(
      /"toString" \(from --context\): no such context/,
    );
    expect(() => resolveContext({ contexts: {} }, chooseContext('x', undefined))).toThrow(
      /known contexts: none/,
    );
  });

  it('uses a chosen context without a saved current one, and says how to pick one otherwise', () => {
    const unselected: PodminConfig = { contexts: { a: ctx('a') } };
    expect(resolveContext(unselected, chooseContext('a', undefined)).cluster).toBe('a');
    expect(() => resolveContext(unselected)).toThrow(/needs a current cluster context/);
  });

  describe('ContextStore.current', () => {
    const dir = useTempDir('podmin-config');

    it('resolves a choice without ever writing the config file', async () => {
      const store = new ContextStore(path.join(dir(), 'config'), PROVIDER_NAMES);
      await store.update(() => config);
      const before = fs.readFileSync(store.file);
      const statBefore = fs.statSync(store.file);
      expect((await store.current(chooseContext('flagged', 'variable'))).cluster).toBe('flagged');
      expect((await store.current(chooseContext(undefined, 'variable'))).cluster).toBe('variable');
      await expect(store.current(chooseContext('nope', undefined))).rejects.toMatchObject({
        code: 'CONTEXT_NOT_FOUND',
      });
      expect((await store.current()).cluster).toBe('saved');
      expect(fs.readFileSync(store.file).equals(before)).toBe(true);
      const statAfter = fs.statSync(store.file);
      expect([statAfter.ino, statAfter.mtimeMs]).toEqual([statBefore.ino, statBefore.mtimeMs]);
      expect(fs.readdirSync(path.join(dir(), 'config')).sort()).toEqual(['config.json']);
    });
  });
});
