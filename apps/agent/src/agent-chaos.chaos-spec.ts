// The chaos tier (issue 29; tools/chaos-tier.sh): faults cost nothing and heal within one poll.
// Three podmin-agents as three nodes in network namespaces on one bucket, with short valid
// election timings (lease 12 s, poll 1 s), one DaemonSet with a Service deployed first. On a
// local-directory bucket: the bucket unreachable for 3 × the lease; the leader SIGKILLed, then
// SIGSTOPped past lease + poll and resumed; 2,000 idle TCP connections to one node's agent-dns;
// the index deleted and restored. Then the same namespaces as a fresh cluster on the S3 emulator
// (moto_server inside the bridge namespace, behind a request counter) with node-2's clock 60 s
// ahead and node-3's 60 s behind (libfaketime) from start-up: no mTLS refusal and one leader
// once every node is ready, then the emulator unreachable for 3 × the lease by SIGSTOP. Each
// scenario prints one `chaos <scenario>: key=value …` line; the whole run must take under 5
// minutes.
// Needs root, `ip netns`, curl, dig, libfaketime and the moto emulator; prints
// `SKIPPED chaos: <reason>` and skips otherwise.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import {
  LEADER_RECORD_KEY,
  SNAPSHOT_KEY,
  isResigned,
  parseLeaderRecord,
} from '@podmin/agent-feature-coordinator';
import {
  LocalDirectoryObjectStore,
  S3ObjectStore,
  createS3Client,
  type ObjectStore,
} from '@podmin/data-access-object-store';
import { ParameterStoreSecretStore, createSsmClient } from '@podmin/data-access-secrets';
import {
  AGENT_BIN,
  commitDesiredState,
  daemonSetManifest,
  describeUnless,
  uniqueBucketName,
  waitFor,
} from '@podmin/testing';
import { serviceVip } from '@podmin/util-desired-state';
import { PodminError } from '@podmin/util-errors';
import { buildDeployment } from '@podmin/util-manifest';
import { parseReceipt, receiptKey } from '@podmin/util-receipts';
import {
  BridgeS3,
  dig,
  faketimeLibrary,
  fileTree,
  motoPython,
  readyz,
  skewedClockEnv,
  startTcpFlood,
} from './__fixtures__/chaos';
import {
  createAgentCluster,
  netnsUnavailable,
  sharedLocalBucket,
  startNodeAgent,
  storeClusterSecrets,
  type NetnsCluster,
  type NetnsNode,
  type NodeAgentSetup,
} from './__fixtures__/netns-cluster';
import {
  explainingSteps,
  recentOutput,
  type LogLine,
  type NodeProcess,
} from './__fixtures__/node-process';

const LEASE_MS = 12_000;
const POLL_MS = 1_000;
/** Every bucket outage lasts three leases. */
const OUTAGE_MS = 3 * LEASE_MS;
/** agent-staticpod polls the index every 5 s ± 10 %. */
const INDEX_POLL_MAX_MS = 5_500;
/** Healthy again within one index poll (+ jitter) and one election poll, plus 1 s of margin. */
const RECOVERY_BOUND_MS = INDEX_POLL_MAX_MS + POLL_MS + 1_000;
/**
 * A new leader within lease + one poll; +1 s for what the test adds: its 200 ms record reads,
 * the winner's write, and process scheduling on a loaded machine.
 */
const FAILOVER_BOUND_MS = LEASE_MS + POLL_MS + 1_000;
/** agent-staticpod takes a vanished index for empty desired state after this grace. */
const MISSING_INDEX_GRACE_MS = 25_000;
/** `index missing since` must be reported within one poll + the grace (+1 s margin). */
const MISSING_INDEX_REPORT_BOUND_MS = INDEX_POLL_MAX_MS + MISSING_INDEX_GRACE_MS + 1_000;
/**
 * ≤ 1 MiB of log per hour of sustained outage, scaled to this outage, but never below 64 KiB
 * (the fault's start-up: the first warning of each loop with its cause).
 */
const LOG_BOUND_BYTES = Math.max(64 * 1024, Math.round((1024 * 1024 * OUTAGE_MS) / 3_600_000));
/** Requests per node per second during an outage, at most this times the healthy rate. */
const RATE_FACTOR = 2;
/** How long after start-up the skewed cluster is watched for mTLS refusals. */
const SKEW_WINDOW_MS = 20_000;
const FLOOD_CONNECTIONS = 2_000;
const RUN_BUDGET_MS = 5 * 60_000;
/** How often the leader record (and the snapshot object) is read while leaders fail. */
const RECORD_WATCH_MS = 200;
const AWS_REGION = 'us-east-1';
const AWS_CREDENTIALS = { accessKeyId: 'podmin-chaos', secretAccessKey: 'podmin-chaos-secret' };

/** One DaemonSet `web` with its Service, in namespace default. */
const manifest = daemonSetManifest({ namespace: 'default', image: 'web:v1', servicePort: 80 });
const SERVICE_NAME = 'web.default.svc.cluster.local';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Why this machine cannot run the tier, or undefined when it can. */
function chaosUnavailable(): string | undefined {
  const netns = netnsUnavailable();
  if (netns !== undefined) return netns;
  for (const tool of ['curl', 'dig'])
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0)
      return `${tool} is not installed (run tools/setup/apt-deps.sh)`;
  if (faketimeLibrary() === undefined)
    return 'libfaketime is not installed (run tools/setup/apt-deps.sh)';
  if (motoPython() === undefined)
    return 'no moto emulator (tools/setup/python-tools.sh could not install it)';
  return undefined;
}

/** What a node serves and holds, compared before, during and after a fault. */
interface NodeView {
  manifests: Record<string, string>;
  workloads: Record<string, string>;
  dns: string;
}

/** One change of `dns/leader.json` (or of the snapshot object) as read every 200 ms. */
interface RecordChange {
  at: number;
  etag: string;
  leaderID: string;
  resigned: boolean;
}

/** Reads the leader record and the snapshot's ETag every {@link RECORD_WATCH_MS}, logging changes. */
class RecordWatcher {
  readonly changes: RecordChange[] = [];
  readonly snapshotChanges: { at: number; etag: string }[] = [];
  private stopped = false;
  private done: Promise<void> = Promise.resolve();

  constructor(private readonly objects: ObjectStore) {}

  /** Starts reading; stops by itself after `maxMs` (bounded even if never stopped). */
  start(maxMs: number): void {
    const until = Date.now() + maxMs;
    this.done = (async () => {
      while (!this.stopped && Date.now() < until) {
        const at = Date.now();
        try {
          const o = await this.objects.get(LEADER_RECORD_KEY);
          if (this.changes.at(-1)?.etag !== o.etag) {
            const record = parseLeaderRecord(o.body);
            this.changes.push({
              at,
              etag: o.etag,
              leaderID: record.leaderID,
              resigned: isResigned(record),
            });
          }
        } catch {
          // Absent or unreadable for a moment: the next read tells.
        }
        try {
          const h = await this.objects.head(SNAPSHOT_KEY);
          if (this.snapshotChanges.at(-1)?.etag !== h.etag)
            this.snapshotChanges.push({ at, etag: h.etag });
        } catch {
          // Not written yet.
        }
        await sleep(Math.max(0, at + RECORD_WATCH_MS - Date.now()));
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.done;
  }

  /** The leaderID history relative to `t0`, for the figures. */
  history(t0: number): string {
    return this.changes
      .map((c) => `${((c.at - t0) / 1000).toFixed(1)}s:${c.resigned ? 'resigned' : c.leaderID}`)
      .join(',');
  }
}

/** Whether a node's agent currently holds leader duties, by its own log. */
function leading(p: NodeProcess): boolean {
  let state = false;
  for (const l of p.lines()) {
    if (l.msg === 'become leader') state = true;
    else if (l.msg === 'stop leader duties') state = false;
  }
  return state;
}

/** A log line that says coordination over mTLS failed (a refused peer or a failed Hello). */
function isRefusal(l: LogLine): boolean {
  if (
    l.msg === 'refuse coordination peer' ||
    l.msg === 'hello leader failed' ||
    l.msg === 'coordination hello failed'
  )
    return true;
  // Other failures that name a certificate problem, in what they say (not in field names:
  // the clock-skew warning's `certificateMarginMs` is no refusal).
  const said = [l.msg, l['error'], l['reason'], l['code']].map((v) => JSON.stringify(v ?? ''));
  return (
    (l.level === 'warn' || l.level === 'error') &&
    said.some((v) => /certificate|not yet valid|CERT_NOT_YET_VALID/i.test(v))
  );
}

describeUnless(chaosUnavailable(), 'chaos')(
  'chaos: faults on three agents in network namespaces, one bucket',
  () => {
    const tierStarted = Date.now();
    let cluster: NetnsCluster | undefined;
    let work = '';
    let s3: BridgeS3 | undefined;
    const agents = new Map<string, NodeProcess>();
    /** Every process started for a node, for the failure output and teardown. */
    const started: NodeProcess[] = [];
    /** Where the current phase's agents run: setup per node and how to read the bucket. */
    let phase:
      | {
          name: string;
          cluster: string;
          objects: ObjectStore;
          setup: Omit<NodeAgentSetup, 'env'> & { env: Record<string, string> };
        }
      | undefined;

    const nodes = (): readonly NetnsNode[] => cluster?.nodes ?? [];
    const agent = (id: string): NodeProcess => {
      const a = agents.get(id);
      if (!a) throw new Error(`no agent runs for ${id}`);
      return a;
    };
    const current = () => {
      if (!phase) throw new Error('no phase is set up');
      return phase;
    };
    const vip = (): string => serviceVip(current().cluster, 'default', 'web');
    const nodeRoot = (node: NetnsNode): string => path.join(current().setup.work, node.id);

    function startAgent(node: NetnsNode, env: Record<string, string> = {}): NodeProcess {
      const { setup } = current();
      const p = startNodeAgent(node, { ...setup, env: { ...setup.env, ...env } });
      agents.set(node.id, p);
      started.push(p);
      return p;
    }

    async function viewOf(node: NetnsNode): Promise<NodeView> {
      const root = nodeRoot(node);
      return {
        manifests: fileTree(path.join(root, 'etc/podmin/manifests')),
        workloads: fileTree(path.join(root, 'run/podmin/workloads')),
        dns: (await dig(node, SERVICE_NAME)).answer,
      };
    }

    /** Every node ready, answering the Service, with its manifest; and one leader. */
    async function clusterReady(timeoutMs: number): Promise<void> {
      /** What each node lacked at the last look, for the timeout's message. */
      let lacking: string[] = [];
      await waitFor(
        async () => {
          lacking = [];
          for (const n of nodes()) {
            const r = await readyz(n);
            if (r.status !== 200)
              lacking.push(`${n.id} /readyz ${r.status}: ${r.body.slice(0, 600)}`);
            const answer = (await dig(n, SERVICE_NAME)).answer;
            if (answer !== vip()) lacking.push(`${n.id} answers ${JSON.stringify(answer)}`);
            if (Object.keys(fileTree(path.join(nodeRoot(n), 'etc/podmin/manifests'))).length === 0)
              lacking.push(`${n.id} has no manifest`);
          }
          const leaders = nodes().filter((n) => leading(agent(n.id))).length;
          if (leaders !== 1) lacking.push(`${leaders} leaders`);
          return lacking.length === 0 ? true : undefined;
        },
        'every node ready, answering the Service and holding its manifest, with one leader',
        timeoutMs,
        500,
      ).catch((err: unknown) => {
        throw new Error(`${(err as Error).message}; lacking: ${lacking.join('; ')}`);
      });
    }

    /** Polls every node's /readyz until each answers 200; ms per node after `since` (or null). */
    async function recoveryTimes(since: number, timeoutMs: number): Promise<Map<string, number>> {
      const back = new Map<string, number>();
      const deadline = since + timeoutMs;
      while (back.size < nodes().length && Date.now() < deadline) {
        await Promise.all(
          nodes()
            .filter((n) => !back.has(n.id))
            .map(async (n) => {
              if ((await readyz(n)).status === 200) back.set(n.id, Date.now() - since);
            }),
        );
        await sleep(200);
      }
      return back;
    }

    /** Runs a step and prints every node's recent log when it fails. */
    const step = explainingSteps(() => recentOutput(started, 30));

    const figures = (scenario: string, values: Record<string, string | number>): void => {
      console.log(
        `chaos ${scenario}: ${Object.entries(values)
          .map(([k, v]) => `${k}=${v}`)
          .join(' ')}`,
      );
    };
    const perNode = (m: Map<string, number | string> | Record<string, number | string>) =>
      (m instanceof Map ? [...m.entries()] : Object.entries(m))
        .map(([k, v]) => `${k}:${v}`)
        .join(',');

    /**
     * One bucket outage of {@link OUTAGE_MS}: every node's manifests, identities and DNS answer
     * sampled against the view before; log bytes per node; /readyz recovery per node after.
     */
    async function outage(
      fault: { begin(): void; end(): void },
      onBegin: () => Promise<void> = () => Promise.resolve(),
    ): Promise<{
      begunAt: number;
      endedAt: number;
      samples: number;
      changed: string[];
      notReadySamples: Map<string, number>;
      logBytes: Map<string, number>;
      warnLines: Map<string, number>;
      recovery: Map<string, number>;
      after: string[];
    }> {
      const before = new Map<string, NodeView>();
      for (const n of nodes()) before.set(n.id, await viewOf(n));
      for (const [id, v] of before) {
        expect({ id, manifests: Object.keys(v.manifests).length > 0, dns: v.dns }).toEqual({
          id,
          manifests: true,
          dns: vip(),
        });
      }
      const bytesAtBegin = new Map(nodes().map((n) => [n.id, agent(n.id).bytes()]));
      const begunAt = Date.now();
      fault.begin();
      const changed: string[] = [];
      const notReadySamples = new Map(nodes().map((n) => [n.id, 0]));
      let samples = 0;
      let endedAt = 0;
      let logBytes = new Map<string, number>();
      let warnLines = new Map<string, number>();
      try {
        await onBegin();
        while (Date.now() < begunAt + OUTAGE_MS - 1_000) {
          const t = Date.now();
          await Promise.all(
            nodes().map(async (n) => {
              const [v, r] = await Promise.all([viewOf(n), readyz(n)]);
              if (r.status !== 200) notReadySamples.set(n.id, (notReadySamples.get(n.id) ?? 0) + 1);
              const b = before.get(n.id);
              const at = `${((t - begunAt) / 1000).toFixed(1)}s`;
              if (JSON.stringify(v.manifests) !== JSON.stringify(b?.manifests))
                changed.push(`${n.id} manifests at ${at}`);
              if (JSON.stringify(v.workloads) !== JSON.stringify(b?.workloads))
                changed.push(`${n.id} identities at ${at}`);
              if (v.dns !== b?.dns) changed.push(`${n.id} dns ${JSON.stringify(v.dns)} at ${at}`);
            }),
          );
          samples++;
          await sleep(
            Math.max(0, Math.min(3_000 - (Date.now() - t), begunAt + OUTAGE_MS - Date.now())),
          );
        }
        await sleep(Math.max(0, begunAt + OUTAGE_MS - Date.now()));
      } finally {
        logBytes = new Map(
          nodes().map((n) => [n.id, agent(n.id).bytes() - (bytesAtBegin.get(n.id) ?? 0)]),
        );
        warnLines = new Map(
          nodes().map((n) => [
            n.id,
            agent(n.id)
              .received(begunAt)
              .filter((r) => r.line.level === 'warn' || r.line.level === 'error').length,
          ]),
        );
        fault.end();
        endedAt = Date.now();
      }
      const recovery = await recoveryTimes(endedAt, 30_000);
      const after: string[] = [];
      for (const n of nodes()) {
        const v = await viewOf(n);
        const b = before.get(n.id);
        if (JSON.stringify(v) !== JSON.stringify(b)) after.push(n.id);
      }
      return {
        begunAt,
        endedAt,
        samples,
        changed,
        notReadySamples,
        logBytes,
        warnLines,
        recovery,
        after,
      };
    }

    /** The assertions every bucket outage shares. */
    function expectOutageHarmless(o: Awaited<ReturnType<typeof outage>>): void {
      expect(o.samples).toBeGreaterThanOrEqual(5);
      expect(o.changed).toEqual([]);
      expect(o.after).toEqual([]);
      for (const n of nodes()) {
        expect({ node: n.id, logBytes: o.logBytes.get(n.id) }).toEqual({
          node: n.id,
          logBytes: expect.any(Number) as number,
        });
        expect({
          node: n.id,
          logBytesWithinBound: (o.logBytes.get(n.id) ?? 0) <= LOG_BOUND_BYTES,
        }).toEqual({ node: n.id, logBytesWithinBound: true });
        expect({ node: n.id, readyAfterMs: o.recovery.get(n.id) ?? 'not within 30 s' }).toEqual({
          node: n.id,
          readyAfterMs: expect.any(Number) as number,
        });
        expect(o.recovery.get(n.id) ?? Infinity).toBeLessThanOrEqual(RECOVERY_BOUND_MS);
      }
    }

    beforeAll(() => {
      cluster = createAgentCluster(3);
      work = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-chaos-'));
    }, 60_000);

    afterAll(async () => {
      await Promise.all(started.map((p) => p.kill()));
      await s3?.stop();
      cluster?.destroy();
      const still = cluster?.remaining() ?? [];
      if (work) fs.rmSync(work, { recursive: true, force: true });
      console.log(`chaos tier: seconds=${((Date.now() - tierStarted) / 1000).toFixed(1)}`);
      if (still.length > 0) throw new Error(`namespaces left behind: ${still.join(', ')}`);
    }, 60_000);

    describe('on a local-directory bucket', () => {
      let bucket = '';
      let objects: LocalDirectoryObjectStore;

      beforeAll(async () => {
        const local = await sharedLocalBucket(path.join(work, 'local'), 'chaos');
        objects = local.objects;
        bucket = local.setup.bucket;
        phase = {
          name: 'local',
          cluster: 'chaos',
          objects,
          setup: {
            ...local.setup,
            env: {
              PODMIN_ELECTION_LEASE_MS: String(LEASE_MS),
              PODMIN_ELECTION_POLL_MS: String(POLL_MS),
            },
          },
        };
        await commitDesiredState(objects, {
          deploy: [
            buildDeployment(manifest, { source: 'test', name: 'web', nodegroup: 'default' }),
          ],
        });
        const t0 = Date.now();
        for (const n of nodes()) startAgent(n);
        await step(() => clusterReady(60_000));
        figures('start-local', { ready_ms: Date.now() - t0 });
      }, 90_000);

      it(
        'keeps manifests, identities and DNS answers through a bucket outage of 3 × the lease (ENOTDIR), and heals within one poll',
        () =>
          step(async () => {
            const away = `${bucket}.away`;
            const codes: Record<string, string> = {};
            const o = await outage(
              {
                begin: () => {
                  // Every access under the bucket's path now fails with ENOTDIR.
                  fs.renameSync(bucket, away);
                  fs.writeFileSync(bucket, 'not a bucket: the chaos tier moved it away\n');
                },
                end: () => {
                  fs.rmSync(bucket);
                  fs.renameSync(away, bucket);
                },
              },
              async () => {
                // What the local store reports for each operation on the broken bucket.
                const probe = new LocalDirectoryObjectStore(bucket);
                const ops: Record<string, () => Promise<unknown>> = {
                  get: () => probe.get('deployments/index.json'),
                  getIfChanged: () => probe.getIfChanged('deployments/index.json', '"0"'),
                  head: () => probe.head(LEADER_RECORD_KEY),
                  list: () => probe.list('status/'),
                  putIfAbsent: () => probe.putIfAbsent('chaos/probe.json', '{}'),
                };
                for (const [op, run] of Object.entries(ops))
                  codes[op] = await run().then(
                    () => 'succeeded',
                    (err: unknown) => (err instanceof PodminError ? err.code : String(err)),
                  );
              },
            );
            figures('bucket-local', {
              outage_s: OUTAGE_MS / 1000,
              samples: o.samples,
              store_codes: perNode(codes),
              log_bytes: perNode(o.logBytes),
              log_bound_bytes: LOG_BOUND_BYTES,
              warn_lines_per_s: perNode(
                new Map([...o.warnLines].map(([k, v]) => [k, (v / (OUTAGE_MS / 1000)).toFixed(1)])),
              ),
              not_ready_samples: perNode(o.notReadySamples),
              ready_after_ms: perNode(o.recovery),
              ready_bound_ms: RECOVERY_BOUND_MS,
              changed: o.changed.length,
            });
            // An unreachable bucket is an I/O fault, never "not found" (which the reconciler would
            // take for an empty desired state).
            expect(Object.values(codes).filter((c) => c === 'OBJECT_NOT_FOUND')).toEqual([]);
            expect(Object.values(codes).filter((c) => c === 'succeeded')).toEqual([]);
            expectOutageHarmless(o);
          }),
        120_000,
      );

      it(
        'moves leadership within lease + poll when the leader is SIGKILLed or SIGSTOPped, and the old leader never writes again',
        () =>
          step(async () => {
            const watcher = new RecordWatcher(objects);
            const t0 = Date.now();
            watcher.start(120_000);
            try {
              const first = await waitFor(
                () => nodes().find((n) => leading(agent(n.id)))?.id,
                'a leader',
                30_000,
              );
              // SIGKILL.
              const killedAt = Date.now();
              agent(first).signal('SIGKILL');
              await agent(first).exited;
              const next = await waitFor(
                () =>
                  watcher.changes.find(
                    (c) => c.at >= killedAt && !c.resigned && c.leaderID !== first,
                  ),
                'a leader after SIGKILL',
                FAILOVER_BOUND_MS + 10_000,
                50,
              );
              const failoverMs = next.at - killedAt;
              const rejoined = startAgent(cluster!.nodes.find((n) => n.id === first)!);
              await sleep(2_000);
              const staleAfterKill = watcher.changes.filter(
                (c) => c.leaderID === first && c.at > killedAt + RECORD_WATCH_MS,
              );
              const leadersAfterKill = nodes().filter(
                (n) => n.id !== first && leading(agent(n.id)),
              ).length;
              figures('leader-sigkill', {
                old: first,
                new: next.leaderID,
                failover_ms: failoverMs,
                bound_ms: FAILOVER_BOUND_MS,
                stale_record_writes: staleAfterKill.length,
                leaders_after: leadersAfterKill,
              });
              expect(next.leaderID).not.toBe(first);
              expect(failoverMs).toBeLessThanOrEqual(FAILOVER_BOUND_MS);
              expect(staleAfterKill).toEqual([]);
              expect(leadersAfterKill).toBe(1);

              // SIGSTOP the new leader once the killed node follows again.
              await waitFor(
                async () => ((await readyz(rejoined.node)).status === 200 ? true : undefined),
                `${first} ready again`,
                30_000,
                250,
              );
              const frozenId = next.leaderID;
              const frozen = agent(frozenId);
              const stoppedAt = Date.now();
              frozen.signal('SIGSTOP');
              let resumedAt = 0;
              try {
                const third = await waitFor(
                  () =>
                    watcher.changes.find(
                      (c) => c.at >= stoppedAt && !c.resigned && c.leaderID !== frozenId,
                    ),
                  'a leader after SIGSTOP',
                  FAILOVER_BOUND_MS + 10_000,
                  50,
                );
                const takeoverMs = third.at - stoppedAt;
                // Frozen past lease + poll, and past the takeover.
                await sleep(Math.max(0, stoppedAt + LEASE_MS + POLL_MS - Date.now()));
                const snapshotWritesBefore = frozen
                  .received(0)
                  .filter((r) => r.line.msg === 'write snapshot').length;
                resumedAt = Date.now();
                frozen.signal('SIGCONT');
                const stopped = await waitFor(
                  () => frozen.received(resumedAt).find((r) => r.line.msg === 'stop leader duties'),
                  `${frozenId} to stop leader duties after SIGCONT`,
                  10_000,
                  50,
                );
                // Give the resumed node a poll and a snapshot interval to try what it still would.
                await sleep(POLL_MS + 5_000);
                const actions = frozen
                  .received(resumedAt)
                  .map((r) => r.line.msg)
                  .filter((m) =>
                    [
                      'stop leader duties',
                      'write snapshot',
                      'refuse snapshot write',
                      'become leader',
                      'resign leadership',
                      'take over leader record',
                    ].includes(m),
                  );
                const staleRecordWrites = watcher.changes.filter(
                  (c) => c.leaderID === frozenId && c.at > stoppedAt + RECORD_WATCH_MS,
                );
                const staleSnapshotWrites =
                  frozen.received(0).filter((r) => r.line.msg === 'write snapshot').length -
                  snapshotWritesBefore;
                const leaders = nodes()
                  .filter((n) => leading(agent(n.id)))
                  .map((n) => n.id);
                const record = watcher.changes.at(-1);
                figures('leader-sigstop', {
                  old: frozenId,
                  new: third.leaderID,
                  takeover_ms: takeoverMs,
                  bound_ms: FAILOVER_BOUND_MS,
                  resumed_after_ms: resumedAt - stoppedAt,
                  stop_duties_after_resume_ms: stopped.at - resumedAt,
                  first_action: JSON.stringify(actions[0] ?? 'none'),
                  stale_record_writes: staleRecordWrites.length,
                  stale_snapshot_writes: staleSnapshotWrites,
                  leaders: leaders.join('+') || 'none',
                });
                figures('leader-history', { changes: watcher.history(t0) });
                expect(third.leaderID).not.toBe(frozenId);
                expect(takeoverMs).toBeLessThanOrEqual(FAILOVER_BOUND_MS);
                expect(actions[0]).toBe('stop leader duties');
                expect(
                  actions.filter(
                    (a) => a !== 'stop leader duties' && a !== 'refuse snapshot write',
                  ),
                ).toEqual([]);
                expect(staleRecordWrites).toEqual([]);
                expect(staleSnapshotWrites).toBe(0);
                expect(leaders).toEqual([third.leaderID]);
                expect(record?.leaderID).toBe(third.leaderID);
              } finally {
                if (resumedAt === 0) frozen.signal('SIGCONT');
              }
            } finally {
              await watcher.stop();
            }
          }),
        120_000,
      );

      it(
        'answers DNS over TCP and UDP while 2,000 idle TCP connections are held open to agent-dns',
        () =>
          step(async () => {
            const node = nodes()[0]!;
            const flood = startTcpFlood(node, '127.0.0.1', 1053, FLOOD_CONNECTIONS);
            started.push(flood);
            try {
              const opened = await waitFor(
                () => flood.find('flood opened').at(-1),
                'the flood to open its connections',
                30_000,
              );
              const floodAt = Date.now();
              const tcp: { answer: string; ms: number }[] = [];
              const udp: { answer: string; ms: number }[] = [];
              // Spread over 6 s: inside an idle timeout of 10 s, the flood is still held.
              for (const offset of [0, 3_000, 6_000]) {
                await sleep(Math.max(0, floodAt + offset - Date.now()));
                tcp.push(await dig(node, SERVICE_NAME, 'tcp'));
                udp.push(await dig(node, SERVICE_NAME, 'udp'));
              }
              const held = flood.find('flood held').at(-1);
              figures('dns-tcp-flood', {
                node: node.id,
                connections: FLOOD_CONNECTIONS,
                connected: Number(opened['open']) + Number(opened['closedByServer']),
                open_when_all_connected: Number(opened['open']),
                failed: Number(opened['failed']),
                open_at_end: Number(held?.['open'] ?? opened['open']),
                closed_by_server: Number(held?.['closedByServer'] ?? 0),
                tcp_ms: tcp
                  .map((q) => (q.answer === vip() ? q.ms : `unanswered(${q.ms})`))
                  .join(','),
                udp_ms: udp
                  .map((q) => (q.answer === vip() ? q.ms : `unanswered(${q.ms})`))
                  .join(','),
              });
              expect(Number(opened['open']) + Number(opened['closedByServer'])).toBeGreaterThan(0);
              expect(tcp.map((q) => q.answer)).toEqual([vip(), vip(), vip()]);
              expect(udp.map((q) => q.answer)).toEqual([vip(), vip(), vip()]);
            } finally {
              await flood.kill();
            }
          }),
        60_000,
      );

      it(
        'reports a deleted index in /readyz and the receipt (`index missing since`), also once the node emptied itself, and converges back',
        () =>
          step(async () => {
            const INDEX_KEY = 'deployments/index.json';
            const MISSING = /index missing since/;
            const saved = (await objects.get(INDEX_KEY)).body;
            // The same static Pods once the index is back: byte-identical but for the identity
            // annotation, since the node re-issues the identities it removed with its Pods.
            const podsOf = (n: NetnsNode): string => {
              const dir = path.join(nodeRoot(n), 'etc/podmin/manifests');
              const read = (f: string): string => {
                try {
                  return fs.readFileSync(path.join(dir, f), 'utf8');
                } catch {
                  return ''; // Replaced or removed between the listing and the read.
                }
              };
              return JSON.stringify(
                Object.keys(fileTree(dir)).map((f) => [
                  f,
                  read(f)
                    .split('\n')
                    .filter((l) => !l.includes('podmin.dev/identity-revision'))
                    .join('\n'),
                ]),
              );
            };
            const manifestsBefore = new Map(nodes().map((n) => [n.id, podsOf(n)]));
            const receiptError = async (n: NetnsNode): Promise<string | null | undefined> => {
              try {
                const body = (await objects.get(receiptKey('default', n.id))).body;
                return parseReceipt(body, { nodegroup: 'default', node: n.id }).error;
              } catch {
                return undefined;
              }
            };
            const deletedAt = Date.now();
            await objects.delete(INDEX_KEY);
            let restored = false;
            try {
              const inReadyz = new Map<string, number>();
              const inReceipt = new Map<string, number>();
              const emptied = new Map<string, number>();
              const lastDetail = new Map<string, string>();
              // A node empties itself at its first pass after the grace: up to one more poll past the bound.
              const deadline = deletedAt + MISSING_INDEX_REPORT_BOUND_MS + 10_000;
              // Until every node has reported it in both places and emptied itself (bounded).
              while (Date.now() < deadline) {
                await Promise.all(
                  nodes().map(async (n) => {
                    const r = await readyz(n);
                    lastDetail.set(n.id, r.body);
                    if (!inReadyz.has(n.id) && MISSING.test(r.body))
                      inReadyz.set(n.id, Date.now() - deletedAt);
                    const e = await receiptError(n);
                    if (!inReceipt.has(n.id) && e !== null && e !== undefined && MISSING.test(e))
                      inReceipt.set(n.id, Date.now() - deletedAt);
                    const files = fileTree(path.join(nodeRoot(n), 'etc/podmin/manifests'));
                    if (!emptied.has(n.id) && Object.keys(files).length === 0)
                      emptied.set(n.id, Date.now() - deletedAt);
                  }),
                );
                const all = (m: Map<string, number>) => nodes().every((n) => m.has(n.id));
                if (all(inReadyz) && all(inReceipt) && all(emptied)) break;
                await sleep(500);
              }
              // Once emptied, both still say why.
              const afterEmpty = await Promise.all(
                nodes().map(async (n) => ({
                  node: n.id,
                  readyz: MISSING.test((await readyz(n)).body),
                  receipt: MISSING.test((await receiptError(n)) ?? ''),
                })),
              );
              await objects.put(INDEX_KEY, saved);
              restored = true;
              const restoredAt = Date.now();
              const converged = new Map<string, number>();
              /** What kept each node from counting as converged at its last look. */
              const pending = new Map<string, string>();
              while (converged.size < nodes().length && Date.now() < restoredAt + 30_000) {
                await Promise.all(
                  nodes()
                    .filter((n) => !converged.has(n.id))
                    .map(async (n) => {
                      const r = await readyz(n);
                      const pods = podsOf(n);
                      const error = await receiptError(n);
                      const state = {
                        readyz: r.status,
                        missing: MISSING.test(r.body),
                        receiptError: error,
                        manifests: pods === manifestsBefore.get(n.id) ? 'as before' : pods,
                      };
                      if (
                        state.readyz === 200 &&
                        !state.missing &&
                        state.receiptError === null &&
                        state.manifests === 'as before'
                      ) {
                        converged.set(n.id, Date.now() - restoredAt);
                        pending.delete(n.id);
                      } else pending.set(n.id, JSON.stringify(state));
                    }),
                );
                await sleep(250);
              }
              if (pending.size > 0)
                console.log(
                  `chaos index-deleted: not converged 30 s after the restore: ${[...pending]
                    .map(([k, v]) => `${k} ${v}`)
                    .join('; ')}`,
                );
              const staticpodDetail = (body: string): string => {
                try {
                  const parsed = JSON.parse(body) as {
                    services?: { name: string; detail: string | null }[];
                  };
                  return JSON.stringify(
                    parsed.services?.find((s) => s.name === 'staticpod')?.detail ?? null,
                  );
                } catch {
                  return JSON.stringify(body.slice(0, 80));
                }
              };
              figures('index-deleted', {
                readyz_says_ms: perNode(inReadyz) || 'none',
                receipt_says_ms: perNode(inReceipt) || 'none',
                emptied_ms: perNode(emptied) || 'none',
                bound_ms: MISSING_INDEX_REPORT_BOUND_MS,
                after_empty: afterEmpty
                  .map((a) => `${a.node}:readyz=${a.readyz},receipt=${a.receipt}`)
                  .join(';'),
                staticpod_detail: perNode(
                  new Map([...lastDetail].map(([k, v]) => [k, staticpodDetail(v)])),
                ),
                converged_ms: perNode(converged) || 'none',
              });
              for (const n of nodes()) {
                expect({ node: n.id, readyzMs: inReadyz.get(n.id) ?? 'never' }).toEqual({
                  node: n.id,
                  readyzMs: expect.any(Number) as number,
                });
                expect({ node: n.id, receiptMs: inReceipt.get(n.id) ?? 'never' }).toEqual({
                  node: n.id,
                  receiptMs: expect.any(Number) as number,
                });
                expect(inReadyz.get(n.id) ?? Infinity).toBeLessThanOrEqual(
                  MISSING_INDEX_REPORT_BOUND_MS,
                );
                expect(inReceipt.get(n.id) ?? Infinity).toBeLessThanOrEqual(
                  MISSING_INDEX_REPORT_BOUND_MS,
                );
                expect(emptied.has(n.id)).toBe(true);
              }
              expect(afterEmpty).toEqual(
                nodes().map((n) => ({ node: n.id, readyz: true, receipt: true })),
              );
              expect([...converged.keys()].sort()).toEqual(
                nodes()
                  .map((n) => n.id)
                  .sort(),
              );
            } finally {
              if (!restored) await objects.put(INDEX_KEY, saved);
            }
          }),
        120_000,
      );
    });

    describe('on the S3 emulator, one node +60 s and another −60 s off (libfaketime)', () => {
      let objects: S3ObjectStore;
      let ahead: NetnsNode;
      let behind: NetnsNode;
      let startedAt = 0;
      let readyAt = 0;

      beforeAll(async () => {
        // The local phase's agents give the namespaces back.
        await Promise.all([...agents.values()].map((p) => p.kill()));
        agents.clear();
        const s3Work = path.join(work, 's3');
        fs.mkdirSync(s3Work, { recursive: true });
        s3 = await BridgeS3.start(cluster!, motoPython()!, s3Work);
        const client = createS3Client({
          region: AWS_REGION,
          endpoint: s3.testEndpoint,
          credentials: AWS_CREDENTIALS,
        });
        const bucket = uniqueBucketName('podmin-chaos');
        await client.send(new CreateBucketCommand({ Bucket: bucket }));
        objects = new S3ObjectStore({ client, bucket });
        phase = {
          name: 's3',
          cluster: 'chaos-s3',
          objects,
          setup: {
            bin: AGENT_BIN,
            cluster: 'chaos-s3',
            provider: 'aws',
            region: AWS_REGION,
            // A global-unicast /80 (the aws provider's rule), from the documentation range.
            podPrefix: (n) => `2001:db8:0:${n.n}::/80`,
            bucket,
            work: s3Work,
            env: {
              PODMIN_ELECTION_LEASE_MS: String(LEASE_MS),
              PODMIN_ELECTION_POLL_MS: String(POLL_MS),
              AWS_ENDPOINT_URL: s3.nodeEndpoint,
              AWS_ACCESS_KEY_ID: AWS_CREDENTIALS.accessKeyId,
              AWS_SECRET_ACCESS_KEY: AWS_CREDENTIALS.secretAccessKey,
              AWS_EC2_METADATA_DISABLED: 'true',
              AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
            },
          },
        };
        await storeClusterSecrets(
          new ParameterStoreSecretStore(
            createSsmClient({
              region: AWS_REGION,
              endpoint: s3.testEndpoint,
              credentials: AWS_CREDENTIALS,
            }),
          ),
          'chaos-s3',
        );
        await commitDesiredState(objects, {
          deploy: [
            buildDeployment(manifest, { source: 'test', name: 'web', nodegroup: 'default' }),
          ],
        });
        // A fresh cluster whose node certificates are all issued under the skew: node-2's clock
        // runs 60 s ahead, node-3's 60 s behind (their service processes inherit it).
        const library = faketimeLibrary()!;
        const [n1, n2, n3] = nodes();
        if (!n1 || !n2 || !n3) throw new Error('three nodes are needed');
        ahead = n2;
        behind = n3;
        startedAt = Date.now();
        startAgent(n1);
        startAgent(ahead, skewedClockEnv(library, '+60s'));
        startAgent(behind, skewedClockEnv(library, '-60s'));
        await step(() => clusterReady(60_000));
        readyAt = Date.now();
        figures('start-s3', { ready_ms: readyAt - startedAt });
      }, 120_000);

      it(
        'keeps one leader and refuses no mTLS peer after start-up with clocks ±60 s off',
        () =>
          step(async () => {
            const leaders = new Set<string>();
            let maxLeading = 0;
            while (Date.now() < readyAt + SKEW_WINDOW_MS) {
              const now = nodes().filter((n) => leading(agent(n.id)));
              maxLeading = Math.max(maxLeading, now.length);
              for (const n of now) leaders.add(n.id);
              try {
                const r = parseLeaderRecord((await objects.get(LEADER_RECORD_KEY)).body);
                leaders.add(r.leaderID);
              } catch {
                // A read racing a write: the next one tells.
              }
              await sleep(1_000);
            }
            const windowEnd = Date.now();
            const refusals = new Map(
              nodes().map((n) => [
                n.id,
                agent(n.id)
                  .received(readyAt)
                  .filter((r) => r.at < windowEnd && isRefusal(r.line)),
              ]),
            );
            const startupRefusals = new Map(
              nodes().map((n) => [
                n.id,
                agent(n.id)
                  .received(startedAt)
                  .filter((r) => r.at < readyAt && isRefusal(r.line)).length,
              ]),
            );
            const skewNote = await Promise.all(
              [ahead, behind].map(
                async (n) => `${n.id}:${/clock|skew/i.test((await readyz(n)).body)}`,
              ),
            );
            figures('clock-skew', {
              ahead: `${ahead.id}(+60s)`,
              behind: `${behind.id}(-60s)`,
              ready_ms: readyAt - startedAt,
              window_s: ((windowEnd - readyAt) / 1000).toFixed(1),
              refusals: perNode(new Map([...refusals].map(([k, v]) => [k, v.length]))),
              startup_refusals: perNode(startupRefusals),
              leaders: [...leaders].join('+') || 'none',
              max_leading_at_once: maxLeading,
              readyz_skew_note: skewNote.join(','),
            });
            const refused = [...refusals.values()].flat();
            for (const n of nodes()) {
              const first = agent(n.id)
                .received(startedAt)
                .find((r) => r.at < readyAt && isRefusal(r.line));
              if (first)
                console.log(
                  `chaos clock-skew: first start-up refusal on ${n.id}: ${JSON.stringify(first.line)}`,
                );
            }
            if (refused.length > 0)
              console.log(
                `chaos clock-skew refusals:\n${refused
                  .slice(0, 10)
                  .map((r) => JSON.stringify(r.line))
                  .join('\n')}`,
              );
            expect(windowEnd - readyAt).toBeGreaterThanOrEqual(SKEW_WINDOW_MS);
            expect(
              refused.map(
                (r) =>
                  `${r.line.msg}: ${JSON.stringify(r.line['error'] ?? r.line['reason'] ?? '')}`,
              ),
            ).toEqual([]);
            expect(leaders.size).toBe(1);
            expect(maxLeading).toBe(1);
          }),
        60_000,
      );

      it(
        'keeps manifests, identities and DNS answers through an S3 outage of 3 × the lease (SIGSTOP), with no more than 2× the healthy request rate, and heals within one poll',
        () =>
          step(async () => {
            // The healthy window is as long as the outage and ends where it begins; it starts 2 s
            // after every node was ready (and covers the clock-skew window above).
            await sleep(Math.max(0, readyAt + 2_000 + OUTAGE_MS - Date.now()));
            const emulator = s3!;
            const o = await outage({ begin: () => emulator.pause(), end: () => emulator.resume() });
            const requests = emulator.requests();
            const rate = (source: string, from: number, to: number): number =>
              requests.filter((r) => r.source === source && r.at >= from && r.at < to).length /
              ((to - from) / 1000);
            const healthy = new Map<string, number>();
            const during = new Map<string, number>();
            for (const n of nodes()) {
              healthy.set(n.id, rate(n.address, o.begunAt - (o.endedAt - o.begunAt), o.begunAt));
              during.set(n.id, rate(n.address, o.begunAt, o.endedAt));
            }
            // What the nodes asked for while the emulator was stopped, most frequent first.
            const asked = new Map<string, number>();
            for (const r of requests)
              if (r.source !== 'test' && r.at >= o.begunAt && r.at < o.endedAt) {
                const what = `${r.method}:${r.path.replace(/^\/[^/?]+/, '').split('?')[0]}`;
                asked.set(what, (asked.get(what) ?? 0) + 1);
              }
            const fmt = (m: Map<string, number>) =>
              perNode(new Map([...m].map(([k, v]) => [k, v.toFixed(2)])));
            figures('bucket-s3', {
              outage_s: ((o.endedAt - o.begunAt) / 1000).toFixed(1),
              samples: o.samples,
              healthy_req_per_s: fmt(healthy),
              outage_req_per_s: fmt(during),
              outage_requests:
                [...asked]
                  .sort((a, b) => b[1] - a[1])
                  .slice(0, 6)
                  .map(([k, v]) => `${k}x${v}`)
                  .join(',') || 'none',
              rate_factor_bound: RATE_FACTOR,
              log_bytes: perNode(o.logBytes),
              log_bound_bytes: LOG_BOUND_BYTES,
              not_ready_samples: perNode(o.notReadySamples),
              ready_after_ms: perNode(o.recovery),
              ready_bound_ms: RECOVERY_BOUND_MS,
              changed: o.changed.length,
            });
            for (const n of nodes()) {
              expect(healthy.get(n.id) ?? 0).toBeGreaterThan(0);
              expect({
                node: n.id,
                withinRate: (during.get(n.id) ?? 0) <= RATE_FACTOR * (healthy.get(n.id) ?? 0),
              }).toEqual({ node: n.id, withinRate: true });
            }
            expectOutageHarmless(o);
          }),
        150_000,
      );
    });

    it('runs the whole tier in under 5 minutes', () => {
      const seconds = (Date.now() - tierStarted) / 1000;
      figures('run', { seconds: seconds.toFixed(1), budget_s: RUN_BUDGET_MS / 1000 });
      expect(seconds * 1000).toBeLessThanOrEqual(RUN_BUDGET_MS);
    });
  },
);
