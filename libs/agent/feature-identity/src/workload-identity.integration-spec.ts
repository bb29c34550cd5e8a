import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmod, lstat, mkdir, readFile, readdir, readlink, stat } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { InMemoryObjectStore, makeTempDir } from '@podmin/testing';
import type { TempDir } from '@podmin/testing';
import { DAY_MS, HOUR_MS, WorkloadCaKey, floorToSecond, parseCertificate } from '@podmin/util-pki';
import { FakeClock } from './__fixtures__/fakes';
import { DEFAULT_CA_ROTATION_POLICY } from './ca-rotation';
import { WorkloadCaRotator } from './workload-ca.rotator';
import { WorkloadCaTrust } from './workload-ca.trust';
import { WorkloadIdentityService } from './workload-identity.service';

const run = promisify(execFile);
const key = WorkloadCaKey.fromSeed(Buffer.alloc(32, 21));
const web = { cluster: 'prod', namespace: 'shop', pod: 'web-0' };

let dir: TempDir;
let clock: FakeClock;
let store: InMemoryObjectStore;
let trust: WorkloadCaTrust;
let T0: Date;

beforeEach(async () => {
  dir = await makeTempDir('feature-identity-gen');
  // openssl checks validity against the real time, so the fake clock starts at it.
  T0 = floorToSecond(new Date());
  clock = new FakeClock(T0);
  store = new InMemoryObjectStore();
  await new WorkloadCaRotator(store, key, clock, { cluster: 'prod' }).reconcile();
  trust = new WorkloadCaTrust(store, key, clock, 'prod');
});

afterEach(async () => {
  // Sealed generations are 0555; make them removable for the cleanup.
  await run('chmod', ['-R', 'u+w', dir.path]);
  await dir.cleanup();
});

const podDir = (): string => path.join(dir.path, 'run/podmin/workloads/web-0');
const generations = async (): Promise<string[]> =>
  (await readdir(path.join(podDir(), 'identity-generations'))).sort();
const mode = async (p: string): Promise<number> => (await stat(p)).mode & 0o777;

describe('workload identity generations on a real filesystem', () => {
  it('writes an immutable generation selected by a relative symlink that openssl accepts', async () => {
    const service = new WorkloadIdentityService(dir.path, clock);
    const result = await service.ensure(web, await trust.load());
    expect(result.outcome).toBe('issued');
    expect(result.replaced).toBe('missing');
    expect(result.identityPath).toBe(path.join(podDir(), 'identity'));
    expect((await lstat(result.identityPath)).isSymbolicLink()).toBe(true);
    expect(await readlink(result.identityPath)).toBe(`identity-generations/${result.generation}`);
    expect(result.generation).toMatch(/^\d{8}T\d{6}Z-[0-9a-f]{16}$/);
    const gen = path.join(podDir(), 'identity-generations', result.generation);
    expect(await mode(gen)).toBe(0o555);
    expect(await mode(path.join(podDir(), 'identity-generations'))).toBe(0o755);
    expect((await readdir(gen)).sort()).toEqual(['ca.crt', 'tls.crt', 'tls.key']);
    for (const f of ['ca.crt', 'tls.crt', 'tls.key'])
      expect(await mode(path.join(gen, f))).toBe(0o444);

    const crt = await readFile(path.join(result.identityPath, 'tls.crt'));
    const der = parseCertificate(crt.toString()).der;
    expect(result.fingerprint).toBe(createHash('sha256').update(der).digest('hex'));
    expect(result.renewAt.getTime()).toBe(result.notAfter.getTime() - 6 * HOUR_MS);
    const verify = await run('/usr/bin/openssl', [
      'verify',
      '-CAfile',
      path.join(result.identityPath, 'ca.crt'),
      path.join(result.identityPath, 'tls.crt'),
    ]);
    expect(verify.stdout).toContain(': OK');
    const pkey = await run('/usr/bin/openssl', [
      'pkey',
      '-in',
      path.join(result.identityPath, 'tls.key'),
      '-noout',
      '-text',
    ]);
    expect(pkey.stdout).toContain('ED25519 Private-Key');
  });

  it('reuses a valid generation after an agent restart', async () => {
    const first = await new WorkloadIdentityService(dir.path, clock).ensure(
      web,
      await trust.load(),
    );
    clock.advance(17 * HOUR_MS);
    const restarted = new WorkloadIdentityService(dir.path, clock);
    const again = await restarted.ensure(
      web,
      await new WorkloadCaTrust(store, key, clock, 'prod').load(),
    );
    expect(again).toMatchObject({
      outcome: 'reused',
      fingerprint: first.fingerprint,
      generation: first.generation,
    });
    expect(await generations()).toEqual([first.generation]);
  });

  it('renews within six hours of expiry and keeps exactly one previous generation', async () => {
    const service = new WorkloadIdentityService(dir.path, clock);
    const g1 = await service.ensure(web, await trust.load());
    clock.advance(18 * HOUR_MS);
    const g2 = await service.ensure(web, await trust.load());
    expect(g2).toMatchObject({ outcome: 'issued', replaced: 'renewal-due' });
    expect(g2.fingerprint).not.toBe(g1.fingerprint);
    expect(await generations()).toEqual([g1.generation, g2.generation].sort());
    expect(await readlink(g2.identityPath)).toBe(`identity-generations/${g2.generation}`);
    clock.advance(18 * HOUR_MS);
    const g3 = await service.ensure(web, await trust.load());
    expect(g3.outcome).toBe('issued');
    expect(await generations()).toEqual([g2.generation, g3.generation].sort());
  });

  it('reissues when the identity, the CA bundle or the files change', async () => {
    const service = new WorkloadIdentityService(dir.path, clock);
    await service.ensure(web, await trust.load());
    const withService = await service.ensure({ ...web, service: 'api' }, await trust.load());
    expect(withService).toMatchObject({ outcome: 'issued', replaced: 'identity-changed' });
    const sans = parseCertificate(
      await readFile(path.join(withService.identityPath, 'tls.crt'), 'utf8'),
    ).dnsNames;
    expect(sans).toEqual(['api.shop.svc.cluster.local', 'api.shop.svc', 'api.shop']);

    // The leader publishes a pending CA while the leaf is still fresh: ca.crt must carry both
    // certificates, so a new generation (and revision) is written.
    clock.advance(60_000);
    const early = { ...DEFAULT_CA_ROTATION_POLICY, rotateBeforeMs: 365 * DAY_MS };
    expect(
      (
        await new WorkloadCaRotator(store, key, clock, {
          cluster: 'prod',
          policy: early,
        }).reconcile()
      ).steps,
    ).toEqual(['add-pending', 'start-propagation']);
    const afterPending = await service.ensure({ ...web, service: 'api' }, await trust.load());
    expect(afterPending).toMatchObject({ outcome: 'issued', replaced: 'ca-bundle-changed' });
    const ca = await readFile(path.join(afterPending.identityPath, 'ca.crt'), 'utf8');
    expect(ca.match(/BEGIN CERTIFICATE/g)).toHaveLength(2);

    // A file whose mode was loosened is not trusted as a sealed generation.
    const gen = path.join(podDir(), 'identity-generations', afterPending.generation);
    await chmod(path.join(gen, 'tls.key'), 0o644);
    const repaired = await service.ensure({ ...web, service: 'api' }, await trust.load());
    expect(repaired).toMatchObject({ outcome: 'issued', replaced: 'unreadable' });
  });

  it("issues once for concurrent calls and clears a crashed writer's temporary directory", async () => {
    const service = new WorkloadIdentityService(dir.path, clock);
    await mkdir(
      path.join(podDir(), 'identity-generations', '.tmp-20000101T000000Z-0000000000000000'),
      { recursive: true },
    );
    const ca = await trust.load();
    const [a, b] = await Promise.all([service.ensure(web, ca), service.ensure(web, ca)]);
    expect(a.outcome).toBe('issued');
    expect(b).toMatchObject({ outcome: 'reused', fingerprint: a.fingerprint });
    expect(await readdir(path.join(podDir(), 'identity-generations'))).toEqual([a.generation]);
    expect((await readdir(podDir())).sort()).toEqual(['identity', 'identity-generations']);
  });
});
