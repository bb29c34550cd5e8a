import { execFile } from 'node:child_process';
import { chmod, lstat, readFile, readdir, readlink, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { InMemoryObjectStore, makeTempDir } from '@podmin/testing';
import type { TempDir } from '@podmin/testing';
import { HOUR_MS, WorkloadCaKey, floorToSecond, parseCertificate } from '@podmin/util-pki';
import { FakeClock } from './__fixtures__/fakes';
import { ExporterCaBundle, TelemetryIdentityService, TELEMETRY_DIR } from './telemetry-identity';
import { WorkloadCaRotator } from './workload-ca.rotator';
import { WorkloadCaTrust } from './workload-ca.trust';

const run = promisify(execFile);
const key = WorkloadCaKey.fromSeed(Buffer.alloc(32, 33));
const node = { cluster: 'prod', nodeId: 'node-a' };

let dir: TempDir;
let clock: FakeClock;
let trust: WorkloadCaTrust;

beforeEach(async () => {
  dir = await makeTempDir('feature-identity-telemetry');
  clock = new FakeClock(floorToSecond(new Date()));
  const store = new InMemoryObjectStore();
  await new WorkloadCaRotator(store, key, clock, { cluster: 'prod' }).reconcile();
  trust = new WorkloadCaTrust(store, key, clock, 'prod');
});

afterEach(async () => {
  await run('chmod', ['-R', 'u+w', dir.path]);
  await dir.cleanup();
});

const telemetry = (...p: string[]) => path.join(dir.path, TELEMETRY_DIR, ...p);
const mode = async (p: string): Promise<number> => (await stat(p)).mode & 0o777;

describe('the log-export identity on a real filesystem', () => {
  it('writes a 0600 generation under /run/podmin/telemetry selected by a symlink, client-only for openssl', async () => {
    const service = new TelemetryIdentityService(dir.path, clock);
    const result = await service.ensure(node, await trust.load());
    expect(result).toMatchObject({ outcome: 'issued', replaced: 'missing' });
    expect(result.directory).toBe(telemetry('otel-logs-generations', result.generation));
    expect(await readlink(telemetry('otel-logs'))).toBe(
      `otel-logs-generations/${result.generation}`,
    );
    expect(await mode(telemetry())).toBe(0o700);
    expect(await mode(result.directory)).toBe(0o500);
    expect((await readdir(result.directory)).sort()).toEqual(['client.crt', 'client.key']);
    for (const f of ['client.crt', 'client.key'])
      expect(await mode(path.join(result.directory, f))).toBe(0o600);
    const cert = parseCertificate(
      await readFile(path.join(result.directory, 'client.crt'), 'utf8'),
    );
    expect(cert.uris).toEqual(['spiffe://prod.podmin.internal/system/otel-logs/node/node-a']);
    expect(result.notAfter.getTime() - clock.now().getTime()).toBe(24 * HOUR_MS);
    // The real TLS client check: openssl verifies it for client auth, refuses it as a server.
    const ca = path.join(dir.path, 'ca.pem');
    await writeFile(ca, (await trust.load()).bundlePem);
    const verify = (purpose: string) =>
      run('openssl', [
        'verify',
        '-purpose',
        purpose,
        '-CAfile',
        ca,
        path.join(result.directory, 'client.crt'),
      ]);
    await expect(verify('sslclient')).resolves.toBeDefined();
    await expect(verify('sslserver')).rejects.toThrow(/unsuitable certificate purpose/);
  });

  it('keeps a valid generation across passes and a new service (an agent restart)', async () => {
    const first = await new TelemetryIdentityService(dir.path, clock).ensure(
      node,
      await trust.load(),
    );
    clock.advance(HOUR_MS);
    const again = await new TelemetryIdentityService(dir.path, clock).ensure(
      node,
      await trust.load(),
    );
    expect(again).toMatchObject({ outcome: 'reused', generation: first.generation });
  });

  it('renews within six hours of expiry onto a new generation, keeping the previous one only', async () => {
    const service = new TelemetryIdentityService(dir.path, clock);
    const first = await service.ensure(node, await trust.load());
    clock.advance(18 * HOUR_MS + 1000);
    const renewed = await service.ensure(node, await trust.load());
    expect(renewed).toMatchObject({ outcome: 'issued', replaced: 'renewal-due' });
    clock.advance(18 * HOUR_MS + 1000);
    const third = await service.ensure(node, await trust.load());
    expect((await readdir(telemetry('otel-logs-generations'))).sort()).toEqual(
      [renewed.generation, third.generation].sort(),
    );
    expect(first.generation).not.toBe(renewed.generation);
  });

  it('repairs a generation whose mode, key or owner is wrong, or whose link points elsewhere', async () => {
    const service = new TelemetryIdentityService(dir.path, clock);
    const ca = await trust.load();
    let current = await service.ensure(node, ca);
    await chmod(path.join(current.directory, 'client.key'), 0o644).catch(async () => {
      await chmod(current.directory, 0o700);
      await chmod(path.join(current.directory, 'client.key'), 0o644);
    });
    current = await service.ensure(node, ca);
    expect(current).toMatchObject({ outcome: 'issued' });
    expect(['file-mode', 'directory-mode']).toContain(current.replaced);
    // The key of another generation: a pair that does not match.
    const other = await new TelemetryIdentityService(path.join(dir.path, 'other'), clock).ensure(
      node,
      ca,
    );
    await chmod(current.directory, 0o700);
    await rm(path.join(current.directory, 'client.key'));
    await writeFile(
      path.join(current.directory, 'client.key'),
      await readFile(path.join(other.directory, 'client.key')),
      { mode: 0o600 },
    );
    await chmod(current.directory, 0o500);
    current = await service.ensure(node, ca);
    expect(current).toMatchObject({ outcome: 'issued', replaced: 'key-mismatch' });
    // Another owner than the agent's user.
    const foreign = new TelemetryIdentityService(dir.path, clock, 4242);
    expect(await foreign.ensure(node, ca)).toMatchObject({ outcome: 'issued', replaced: 'owner' });
    // A link to a path that is not a generation of ours.
    await rm(path.join(dir.path, TELEMETRY_DIR, 'otel-logs'));
    await run('ln', ['-s', '/etc', path.join(dir.path, TELEMETRY_DIR, 'otel-logs')]);
    expect(await service.ensure(node, ca)).toMatchObject({
      outcome: 'issued',
      replaced: 'missing',
    });
    expect((await lstat(telemetry('otel-logs'))).isSymbolicLink()).toBe(true);
  });
});

describe('the exporter’s CA bundle', () => {
  it('installs a valid bundle atomically, keeps the last good one on failure', async () => {
    const caPem = (await trust.load()).bundlePem;
    let next: () => Promise<Uint8Array> = () => Promise.resolve(Buffer.from(caPem));
    const bundle = new ExporterCaBundle(dir.path, 's3://b/ca.pem', () => next(), clock);
    expect(await bundle.refresh()).toEqual({
      outcome: 'installed',
      path: telemetry('otel-logs-ca.pem'),
    });
    expect(await readFile(bundle.path, 'utf8')).toBe(caPem);
    expect(await mode(bundle.path)).toBe(0o600);
    expect(await bundle.refresh()).toMatchObject({ outcome: 'unchanged' });
    next = () => Promise.reject(new Error('GET s3://b/ca.pem: AccessDenied'));
    expect(await bundle.refresh()).toMatchObject({
      outcome: 'kept',
      error: 'GET s3://b/ca.pem: AccessDenied',
    });
    next = () =>
      Promise.resolve(
        Buffer.from('-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n'),
      );
    const refused = await bundle.refresh();
    expect(refused).toMatchObject({ outcome: 'kept' });
    expect(refused.outcome === 'kept' && refused.error).toContain(
      'ca=s3://b/ca.pem: contains a private key',
    );
    expect(await readFile(bundle.path, 'utf8')).toBe(caPem);
  });
});
