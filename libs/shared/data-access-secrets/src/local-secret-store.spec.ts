import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LocalSecretStore } from './local-secret-store';
import { DAY_MS } from './provider-rules';

describe('LocalSecretStore', () => {
  let dir: string;
  let file: string;
  let now: Date;
  const clock = () => now;
  const name = '/demo/default/web/oauth-token';

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-local-secrets-'));
    file = path.join(dir, 'secrets', 'demo.json');
    now = new Date('2030-01-01T00:00:00Z');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const sm = () => new LocalSecretStore({ file, provider: 'aws-secrets-manager', now: clock });
  const ps = () => new LocalSecretStore({ file, provider: 'aws-parameter-store', now: clock });

  it('keeps the two provider names apart in one file', async () => {
    await sm().create(name, Buffer.from('from-sm'));
    await ps().create(name, Buffer.from('from-ps'));
    expect((await sm().get(name)).toString()).toBe('from-sm');
    expect((await ps().get(name)).toString()).toBe('from-ps');
    const doc = JSON.parse(fs.readFileSync(file, 'utf8')) as { providers: object };
    expect(Object.keys(doc.providers)).toEqual(['aws-parameter-store', 'aws-secrets-manager']);
    expect(fs.readFileSync(file, 'utf8')).not.toContain('from-sm');
  });

  it('answers existence per provider name without writing the file', async () => {
    expect(await ps().exists(name)).toBe(false);
    expect(fs.existsSync(file)).toBe(false);
    await sm().create(name, Buffer.from('tok'));
    const before = fs.readFileSync(file);
    expect(await sm().exists(name)).toBe(true);
    expect(await ps().exists(name)).toBe(false);
    expect(fs.readFileSync(file).equals(before)).toBe(true);
  });

  it('records the deletion date, restores within the window, and forgets after 30 days', async () => {
    await sm().create(name, Buffer.from('tok'));
    await sm().delete(name);
    const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
    expect(doc.providers['aws-secrets-manager'][name].deletionDate).toBe(
      '2030-01-31T00:00:00.000Z',
    );
    now = new Date(now.getTime() + 29 * DAY_MS);
    await expect(sm().get(name)).rejects.toMatchObject({ code: 'PRECONDITION_FAILED' });
    await sm().restore(name);
    expect((await sm().get(name)).toString()).toBe('tok');

    await sm().delete(name);
    now = new Date(now.getTime() + 30 * DAY_MS);
    await expect(sm().get(name)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(sm().restore(name)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await sm().list('/demo/')).toEqual([]);
    await sm().create(name, Buffer.from('new'));
    expect((await sm().get(name)).toString()).toBe('new');
  });

  it('serialises concurrent writers so no write is lost', async () => {
    const names = Array.from({ length: 25 }, (_, i) => `/demo/default/web/k${i}`);
    await Promise.all(names.map((n) => sm().create(n, Buffer.from(n))));
    expect(await sm().list('/demo/')).toEqual([...names].sort());
    expect(fs.readdirSync(path.dirname(file))).toEqual(['demo.json']);
  });

  it('writes deterministic, sorted JSON with mode 0600', async () => {
    await ps().create('/demo/default/web/b', Buffer.from('2'));
    await ps().create('/demo/default/web/a', Buffer.from('1'));
    const text = fs.readFileSync(file, 'utf8');
    expect(text.indexOf('/web/a')).toBeLessThan(text.indexOf('/web/b'));
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  });

  it('treats a damaged file as an IO_ERROR rather than an empty store', async () => {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, '{"version":1,"providers":{"aws-parameter-store":{"../x":{}}}}');
    await expect(ps().list('/')).rejects.toMatchObject({ code: 'IO_ERROR' });
    fs.writeFileSync(file, 'not json');
    await expect(ps().get(name)).rejects.toMatchObject({ code: 'IO_ERROR' });
  });

  it('reads a missing file as an empty store', async () => {
    expect(await ps().list('/')).toEqual([]);
    await expect(ps().get(name)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});
