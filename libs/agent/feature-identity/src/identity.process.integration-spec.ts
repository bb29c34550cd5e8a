// The spec's "only the elected leader creates or rotates identity/ca.json", with two nodes'
// identity services on one real local-directory bucket: the follower (its coordinator says it
// does not lead) leaves the object's bytes and ETag alone even when a rotation is due, and
// creates nothing on a new cluster; the leader, asked the same at the same time, does rotate.
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { LocalDirectoryObjectStore } from '@podmin/data-access-object-store';
import { JsonLogger } from '@podmin/agent-util-logging';
import { makeTempDir, waitFor, type TempDir } from '@podmin/testing';
import { hasCode } from '@podmin/util-errors';
import { WorkloadCaKey, createClusterCa, floorToSecond } from '@podmin/util-pki';
import { FakeClock, RecordingLogExporter } from './__fixtures__/fakes';
import { CA_STATE_KEY } from './ca-state';
import { IdentityProcessService, type IdentityProcessDeps } from './identity.service';
import type { LeadershipCheck } from './identity.ports';
import { WorkloadCaRotator } from './workload-ca.rotator';

const key = WorkloadCaKey.fromSeed(Buffer.alloc(32, 7));

/** A coordinator's leadership answer that never changes, counting how often it was asked. */
class FixedLeadership implements LeadershipCheck {
  asked = 0;
  constructor(private readonly leader: boolean) {}
  leading(): Promise<boolean> {
    this.asked++;
    return Promise.resolve(this.leader);
  }
}

let bucketDir: TempDir;
let nodeRoot: TempDir;
let bucket: LocalDirectoryObjectStore;
let clock: FakeClock;
const services: IdentityProcessService[] = [];

beforeEach(async () => {
  bucketDir = await makeTempDir('identity-bucket');
  nodeRoot = await makeTempDir('identity-node');
  bucket = new LocalDirectoryObjectStore(bucketDir.path);
  clock = new FakeClock(floorToSecond(new Date()));
});

afterEach(async () => {
  for (const s of services.splice(0)) s.onApplicationShutdown();
  await bucketDir.cleanup();
  await nodeRoot.cleanup();
});

/** One node's identity service on the shared bucket, its coordinator answering `leader`. */
async function identityOf(
  nodeId: string,
  leadership: LeadershipCheck,
  extra: Partial<IdentityProcessDeps> = {},
) {
  const lines: Array<Record<string, unknown>> = [];
  const service = new IdentityProcessService({
    cluster: 'demo',
    nodegroup: 'default',
    nodeRoot: path.join(nodeRoot.path, nodeId),
    nodeAddress: '2001:db8::1',
    nodeId,
    objects: bucket,
    workloadCaKey: key,
    clusterCa: await createClusterCa('demo', clock.now()),
    clock,
    logger: new JsonLogger({
      write: (l) => lines.push(JSON.parse(l) as Record<string, unknown>),
    }),
    leadership,
    ...extra,
  });
  services.push(service);
  return { service, lines };
}

/** The object exactly as it lies in the bucket: its file's bytes and the store's ETag. */
async function caObject(): Promise<{ bytes: Buffer; etag: string }> {
  const stored = await bucket.get(CA_STATE_KEY);
  const bytes = await readFile(path.join(bucketDir.path, CA_STATE_KEY));
  expect(bytes.equals(stored.body)).toBe(true);
  return { bytes, etag: stored.etag };
}

describe('identity/ca.json on a shared bucket', () => {
  it('a follower leaves it alone when a rotation is due; the leader rotates it', async () => {
    // The leader created the CA a while ago; now its next step (a pending CA) is due.
    const created = await new WorkloadCaRotator(bucket, key, clock, {
      cluster: 'demo',
    }).reconcile();
    expect(created.steps).toEqual(['create']);
    clock.set(new Date(created.nextCheckAt.getTime() + 1000));
    const before = await caObject();

    const followerLeadership = new FixedLeadership(false);
    const follower = await identityOf('node-2', followerLeadership);
    await follower.service.rotate();
    expect(followerLeadership.asked).toBe(1);
    const after = await caObject();
    expect(after.etag).toBe(before.etag);
    expect(after.bytes.equals(before.bytes)).toBe(true);
    expect(follower.lines.filter((l) => l['msg'] === 'rotate workload CA')).toEqual([]);

    // Not vacuous: at the same moment the leader does write a rotation step.
    const leader = await identityOf('node-1', new FixedLeadership(true));
    await leader.service.rotate();
    const rotated = await caObject();
    expect(rotated.etag).not.toBe(before.etag);
    expect(leader.lines).toContainEqual(
      expect.objectContaining({
        msg: 'rotate workload CA',
        steps: 'add-pending, start-propagation',
      }),
    );
  });

  it('a follower on a new cluster creates no CA: its first workload waits for the leader', async () => {
    const follower = await identityOf('node-2', new FixedLeadership(false));
    await follower.service.rotate();
    const refused = await follower.service.ensureWorkload('web-0', 'shop', '').then(
      () => 'issued',
      (err: unknown) => (hasCode(err, 'OBJECT_NOT_FOUND') ? 'OBJECT_NOT_FOUND' : String(err)),
    );
    expect(refused).toBe('OBJECT_NOT_FOUND');
    await expect(bucket.get(CA_STATE_KEY)).rejects.toMatchObject({ code: 'OBJECT_NOT_FOUND' });

    // The leader, asked for the same workload, creates the CA first.
    const leader = await identityOf('node-1', new FixedLeadership(true));
    await leader.service.ensureWorkload('web-0', 'shop', '');
    await expect(bucket.get(CA_STATE_KEY)).resolves.toMatchObject({ etag: expect.any(String) });
  });
});

describe('log export in the identity process', () => {
  it('keeps Fluent Bit’s leaf from bootstrap on, restarting it once, with the process healthy', async () => {
    await new WorkloadCaRotator(bucket, key, clock, { cluster: 'demo' }).reconcile();
    const exporter = new RecordingLogExporter();
    const health: Array<[boolean, string | undefined]> = [];
    const { service } = await identityOf('node-1', new FixedLeadership(false), {
      telemetry: { mtls: true, exporter },
      reportHealth: (healthy, detail) => health.push([healthy, detail]),
    });
    service.onApplicationBootstrap();
    const leafKey = path.join(nodeRoot.path, 'node-1/run/podmin/telemetry/otel-logs/client.key');
    await waitFor(() => (exporter.restarts > 0 ? true : undefined), 'the first restart', 10_000);
    expect((await stat(leafKey)).mode & 0o777).toBe(0o600);
    expect(exporter.restarts).toBe(1);
    expect(health).toEqual([]);
  });

  it('logs refused settings once, shows them in health, and writes no telemetry files', async () => {
    const health: Array<[boolean, string | undefined]> = [];
    const { service, lines } = await identityOf('node-1', new FixedLeadership(false), {
      telemetryProblems: ['PODMIN_OTEL_LOGS_MTLS: must be true or false, not "yes"'],
      reportHealth: (healthy, detail) => health.push([healthy, detail]),
    });
    service.onApplicationBootstrap();
    expect(health).toEqual([
      [true, 'log export off: PODMIN_OTEL_LOGS_MTLS: must be true or false, not "yes"'],
    ]);
    expect(lines.filter((l) => l['msg'] === 'log export off: invalid settings')).toHaveLength(1);
    await expect(stat(path.join(nodeRoot.path, 'node-1/run'))).rejects.toMatchObject({
      code: 'ENOENT',
    });
  });
});
