// agent-identity's log-export maintenance with real parts: generations on a real filesystem,
// the workload CA in one S3 bucket and the exporter's `ca=` object in another, both on the S3
// emulator; only the Fluent Bit restart is a recording port (systemd is not ours to drive).
import { execFile } from 'node:child_process';
import { chmod, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import type { S3Client } from '@aws-sdk/client-s3';
import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { S3ObjectStore, createS3Client } from '@podmin/data-access-object-store';
import { emulatorBucket, makeTempDir, type TempDir } from '@podmin/testing';
import {
  HOUR_MS,
  MINUTE_MS,
  WorkloadCaKey,
  createClusterCa,
  floorToSecond,
  issueTelemetryLeaf,
} from '@podmin/util-pki';
import { FakeClock, RecordingLogExporter, RecordingLogger } from './__fixtures__/fakes';
import { objectStoreCaSource } from './adapters/object-store-ca-source';
import { TELEMETRY_DIR } from './telemetry-identity';
import { TelemetryMaintenance, type TelemetryMaintenanceDeps } from './telemetry-maintenance';
import { WorkloadCaRotator } from './workload-ca.rotator';
import { WorkloadCaTrust } from './workload-ca.trust';

const run = promisify(execFile);
const key = WorkloadCaKey.fromSeed(Buffer.alloc(32, 34));
const CA_KEY = 'otel/exporter-ca.pem';

let client: S3Client;
let clusterBucket: string;
let trustBucket: string;
let dir: TempDir;
let clock: FakeClock;
let trust: WorkloadCaTrust;
let exporter: RecordingLogExporter;
let logger: RecordingLogger;
let problems: Array<string | undefined>;

beforeAll(async () => {
  ({ client, bucket: clusterBucket } = await emulatorBucket('otel-cluster', createS3Client));
  ({ bucket: trustBucket } = await emulatorBucket('otel-trust', createS3Client));
}, 180_000);

afterAll(() => client.destroy());

beforeEach(async () => {
  dir = await makeTempDir('feature-identity-telemetry-loop');
  clock = new FakeClock(floorToSecond(new Date()));
  // The first test creates identity/ca.json in the cluster bucket; later ones find it in place.
  const objects = new S3ObjectStore({ client, bucket: clusterBucket });
  await new WorkloadCaRotator(objects, key, clock, { cluster: 'prod' }).reconcile();
  trust = new WorkloadCaTrust(objects, key, clock, 'prod');
  exporter = new RecordingLogExporter();
  logger = new RecordingLogger();
  problems = [];
});

afterEach(async () => {
  await run('chmod', ['-R', 'u+w', dir.path]);
  await dir.cleanup();
});

const telemetry = (...p: string[]) => path.join(dir.path, TELEMETRY_DIR, ...p);

function maintenance(over: Partial<TelemetryMaintenanceDeps> = {}): TelemetryMaintenance {
  return new TelemetryMaintenance({
    nodeRoot: dir.path,
    identity: { cluster: 'prod', nodeId: 'i-0abc' },
    mtls: true,
    trust,
    exporter,
    clock,
    logger,
    onProblems: (detail) => problems.push(detail),
    ...over,
  });
}

/** The `ca=` object on the emulator, as agent-identity reads it. */
function caSource(objectKey = CA_KEY) {
  return {
    source: `s3://${trustBucket}/${objectKey}`,
    fetch: objectStoreCaSource(new S3ObjectStore({ client, bucket: trustBucket }), {
      bucket: trustBucket,
      key: objectKey,
    }),
  };
}

async function putCa(body: string | Buffer, objectKey = CA_KEY): Promise<void> {
  await client.send(new PutObjectCommand({ Bucket: trustBucket, Key: objectKey, Body: body }));
}

async function pemOfNewCa(cluster: string): Promise<string> {
  return (await createClusterCa(cluster, clock.now())).certificate.pem;
}

describe('the log-export identity, maintained pass after pass', () => {
  it('issues on the first pass, leaves a valid leaf alone, and restarts Fluent Bit once per replacement', async () => {
    const loop = maintenance();
    const first = await loop.pass();
    expect(first.leaf).toMatchObject({ outcome: 'issued', replaced: 'missing' });
    expect(first.restart).toEqual({ outcome: 'restarted' });
    expect(exporter.restarts).toBe(1);
    expect((await stat(telemetry('otel-logs'))).isDirectory()).toBe(true);

    // Valid: several passes an hour apart change nothing and restart nothing.
    for (let i = 0; i < 3; i++) {
      clock.advance(HOUR_MS);
      const again = await loop.pass();
      expect(again.leaf).toMatchObject({ outcome: 'reused', generation: first.leaf?.generation });
      expect(again.restart).toBeUndefined();
    }
    expect(exporter.restarts).toBe(1);

    // A corrupted key: replaced, one restart.
    const keyFile = path.join(first.leaf?.directory ?? '', 'client.key');
    await writeFile(keyFile, '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n');
    const corrupted = await loop.pass();
    expect(corrupted.leaf).toMatchObject({ outcome: 'issued' });
    expect(corrupted.leaf?.replaced).not.toBe('missing');
    expect(corrupted.leaf?.generation).not.toBe(first.leaf?.generation);
    expect(exporter.restarts).toBe(2);

    // A mode changed: replaced, one restart.
    await chmod(path.join(corrupted.leaf?.directory ?? '', 'client.key'), 0o644);
    const opened = await loop.pass();
    expect(opened.leaf).toMatchObject({ outcome: 'issued', replaced: 'file-mode' });
    expect(exporter.restarts).toBe(3);

    // Within six hours of expiry: renewed, one restart; the next pass leaves it alone.
    clock.advance(18 * HOUR_MS + 1000);
    const renewed = await loop.pass();
    expect(renewed.leaf).toMatchObject({ outcome: 'issued', replaced: 'renewal-due' });
    expect(exporter.restarts).toBe(4);
    expect((await loop.pass()).leaf).toMatchObject({ outcome: 'reused' });
    expect(exporter.restarts).toBe(4);
    // The selected generation and the one before it, nothing else.
    expect((await readdir(telemetry('otel-logs-generations'))).sort()).toEqual(
      [opened.leaf?.generation, renewed.leaf?.generation].sort(),
    );
    expect(logger.messages('info').filter((m) => m === 'issue log-export identity')).toHaveLength(
      4,
    );
    expect(logger.messages('warn')).toEqual([]);
    expect(problems).toEqual([]);
  });

  it('retries a failed restart at the next pass, logging the cause once, and restarts once for it', async () => {
    const loop = maintenance();
    const failure = (at: string) => ({
      outcome: 'failed' as const,
      error: `systemctl try-restart fluent-bit.service: exit code 1: Job failed at ${at}`,
    });
    // The same cause at another time is the same cause: logged and reported once.
    const first = failure('2026-12-03T17:00:00.000Z');
    exporter.next.push(first, failure('2026-12-03T17:01:00.000Z'));
    expect((await loop.pass()).restart).toEqual(first);
    expect((await loop.pass()).restart).toMatchObject({ outcome: 'failed' });
    expect(problems).toEqual([`log exporter restart: ${first.error}`]);
    const recovered = await loop.pass();
    expect(recovered).toMatchObject({
      leaf: { outcome: 'reused' },
      restart: { outcome: 'restarted' },
    });
    expect((await loop.pass()).restart).toBeUndefined();
    expect(exporter.restarts).toBe(3);
    expect(logger.messages('warn')).toEqual([
      'restart log exporter failed; retrying at the next pass',
    ]);
    expect(problems).toEqual([`log exporter restart: ${first.error}`, undefined]);
  });

  it('logs a missing workload CA once and issues as soon as it can be read', async () => {
    // A node whose cluster bucket has no identity/ca.json yet (the leader has not created it).
    let current = new WorkloadCaTrust(
      new S3ObjectStore({ client, bucket: trustBucket }),
      key,
      clock,
      'prod',
    );
    const loop = maintenance({ trust: { load: () => current.load() } });
    expect((await loop.pass()).problems).toEqual([
      expect.stringContaining('log-export identity: loading the workload CA'),
    ]);
    await loop.pass();
    expect(logger.messages('warn')).toEqual(['keep log-export identity failed']);
    expect(exporter.restarts).toBe(0);
    await expect(readdir(telemetry())).rejects.toMatchObject({ code: 'ENOENT' });
    current = trust;
    expect(await loop.pass()).toMatchObject({
      leaf: { outcome: 'issued', replaced: 'missing' },
      restart: { outcome: 'restarted' },
      problems: [],
    });
    expect(problems).toEqual([expect.stringContaining('log-export identity'), undefined]);
    expect(logger.messages('info')).toContain('log-export identity kept again');
  });
});

describe('the exporter’s ca= bundle from its exact S3 object', () => {
  it('installs it at start, refreshes every five minutes, and keeps the last good one byte for byte', async () => {
    const good = await pemOfNewCa('exporter');
    await putCa(good);
    const loop = maintenance({ mtls: false, ca: caSource() });
    const first = await loop.pass();
    expect(first.ca).toEqual({ outcome: 'installed', path: telemetry('otel-logs-ca.pem') });
    expect(first.restart).toEqual({ outcome: 'restarted' });
    const installed = await readFile(telemetry('otel-logs-ca.pem'));
    expect(installed.toString()).toBe(good);
    expect((await stat(telemetry('otel-logs-ca.pem'))).mode & 0o777).toBe(0o600);
    // mtls off: the CA bundle is all there is.
    expect(await readdir(telemetry())).toEqual(['otel-logs-ca.pem']);

    // Not read again before five minutes have passed.
    const next = await pemOfNewCa('exporter-next');
    await putCa(next);
    clock.advance(4 * MINUTE_MS);
    expect((await loop.pass()).ca).toBeUndefined();
    clock.advance(MINUTE_MS);
    expect((await loop.pass()).ca).toMatchObject({ outcome: 'installed' });
    expect(await readFile(telemetry('otel-logs-ca.pem'), 'utf8')).toBe(next);
    expect(exporter.restarts).toBe(2);
    clock.advance(5 * MINUTE_MS);
    expect((await loop.pass()).ca).toMatchObject({ outcome: 'unchanged' });
    expect(exporter.restarts).toBe(2);

    // A corrupt replacement (a key in it): the installed bundle stays byte for byte, logged once.
    // After failures the next read comes within five minutes plus jitter (hence six).
    const before = await readFile(telemetry('otel-logs-ca.pem'));
    await putCa(`${next}-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n`);
    for (let i = 0; i < 3; i++) {
      clock.advance(6 * MINUTE_MS);
      const kept = await loop.pass();
      expect(kept.ca).toMatchObject({ outcome: 'kept' });
      expect(kept.problems).toEqual([
        `exporter CA bundle: ca=s3://${trustBucket}/${CA_KEY}: contains a private key; a CA bundle holds certificates only`,
      ]);
      expect((await readFile(telemetry('otel-logs-ca.pem'))).equals(before)).toBe(true);
    }
    // A leaf instead of a CA, then no object at all: each a new cause, each logged once.
    const leaf = await issueTelemetryLeaf(
      (await trust.load()).issuer,
      { cluster: 'prod', nodeId: 'other' },
      clock.now(),
    );
    await putCa(leaf.certificatePem);
    clock.advance(6 * MINUTE_MS);
    expect((await loop.pass()).problems).toEqual([expect.stringContaining('is not a CA')]);
    await client.send(new DeleteObjectCommand({ Bucket: trustBucket, Key: CA_KEY }));
    clock.advance(6 * MINUTE_MS);
    expect((await loop.pass()).ca).toMatchObject({ outcome: 'kept' });
    expect((await readFile(telemetry('otel-logs-ca.pem'))).equals(before)).toBe(true);
    expect(logger.messages('warn')).toEqual([
      'refresh exporter CA bundle failed; keeping the last good one',
      'refresh exporter CA bundle failed; keeping the last good one',
      'refresh exporter CA bundle failed; keeping the last good one',
    ]);
    expect(exporter.restarts).toBe(2);

    // Repaired upstream: installed, one restart, the problem cleared.
    const fixed = await pemOfNewCa('exporter-fixed');
    await putCa(fixed);
    clock.advance(6 * MINUTE_MS);
    expect((await loop.pass()).ca).toMatchObject({ outcome: 'installed' });
    expect(await readFile(telemetry('otel-logs-ca.pem'), 'utf8')).toBe(fixed);
    expect(exporter.restarts).toBe(3);
    expect(problems.at(-1)).toBeUndefined();
    expect(logger.messages('info')).toContain('exporter CA bundle refreshed again');
  });

  it('reports a missing object without installing anything, and restarts once for leaf and bundle together', async () => {
    const loop = maintenance({ ca: caSource('otel/absent.pem') });
    const first = await loop.pass();
    expect(first.ca).toMatchObject({ outcome: 'kept' });
    expect(first.problems).toEqual([
      expect.stringMatching(/^exporter CA bundle: ca=s3:\/\/.*\/otel\/absent\.pem: .*not exist/),
    ]);
    expect((await readdir(telemetry())).sort()).toEqual(['otel-logs', 'otel-logs-generations']);
    expect(exporter.restarts).toBe(1);

    await putCa(await pemOfNewCa('exporter'), 'otel/absent.pem');
    await chmod(path.join(first.leaf?.directory ?? '', 'client.crt'), 0o640);
    // The failed read is retried sooner than five minutes (backoff from one minute).
    clock.advance(2 * MINUTE_MS);
    const both = await loop.pass();
    expect(both.leaf).toMatchObject({ outcome: 'issued', replaced: 'file-mode' });
    expect(both.ca).toMatchObject({ outcome: 'installed' });
    expect(exporter.restarts).toBe(2);
  });
});

describe('log export without mtls or ca=', () => {
  it('writes no telemetry files at all', async () => {
    const loop = maintenance({ mtls: false });
    expect(loop.enabled).toBe(false);
    loop.start();
    expect(await loop.pass()).toEqual({ problems: [] });
    loop.stop();
    await expect(stat(path.join(dir.path, 'run'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(exporter.restarts).toBe(0);
  });
});
