import fs from 'node:fs';
import path from 'node:path';
import {
  commitDesiredState,
  InMemoryObjectStore,
  rollingDaemonSetManifest,
  useTempDir,
} from '@podmin/testing';
import { buildDeployment } from '@podmin/util-manifest';
import type { KubeletPod } from '@podmin/agent-data-access-kubelet-pods';
import type { Admission, NodeDeploymentReport } from '@podmin/util-rollout';
import { FakeIdentity } from './__fixtures__/fake-ports';
import { nodePaths } from './node-paths';
import { StaticPodReconciler, type RolloutCoordination } from './reconciler';
import type { KubeletView } from './receipts/receipt-writer';
import { ROLLOUT_DRAIN_MS, surgeName } from './rollout/node-rollout';
import type { SecretSource, ServiceSink } from './staticpod.ports';

/** DaemonSet `web` (NodeGroup workers, secret `token`) on `hello:<tag>`, surging one at a time. */
const manifest = (tag: string) =>
  rollingDaemonSetManifest({
    nodegroup: 'workers',
    secret: 'token',
    containers: { app: `hello:${tag}` },
    maxSurge: 1,
    maxUnavailable: 0,
  });

/** Secret source fake: every key resolves to a fixed value. */
const secrets: SecretSource = { fetch: () => Promise.resolve(Buffer.from('s3cret')) };
/** Service sink fake that drops what it is given. */
const services: ServiceSink = { publish: () => Promise.resolve() };

/** kubelet fake: runs every published manifest; the test says which revisions are Ready. */
class FakeKubelet implements KubeletView {
  ready = new Set<string>();
  constructor(private readonly manifests: string) {}
  report(): Promise<{ state: 'ok'; pods: KubeletPod[] }> {
    const pods = fs
      .readdirSync(this.manifests)
      .filter((f) => f.endsWith('.yaml'))
      .map((f): KubeletPod => {
        const text = fs.readFileSync(path.join(this.manifests, f), 'utf8');
        const revision = /podmin\.dev\/revision: (\S+)/.exec(text)?.[1] ?? '';
        return {
          uid: f,
          name: f.slice(0, -5),
          namespace: 'product',
          labels: {},
          annotations: { 'podmin.dev/revision': revision },
          phase: 'Running',
          ready: this.ready.has(revision),
          readyTransition: new Date(0),
          podIPs: [],
          containers: [],
        };
      });
    return Promise.resolve({ state: 'ok', pods });
  }
  close(): void {
    this.ready.clear();
  }
  /** The revision of the Pod in `file`. */
  revisionOf(file: string): string {
    const text = fs.readFileSync(path.join(this.manifests, file), 'utf8');
    return /podmin\.dev\/revision: (\S+)/.exec(text)?.[1] ?? '';
  }
}

/** Coordinator fake: records what the node reports and drains, answers the test's admissions. */
class FakeCoordination implements RolloutCoordination {
  admissions: Admission[] = [];
  reports: NodeDeploymentReport[] = [];
  draining: Array<{ revision: string; replacementRevision: string }> = [];
  sync(state: Parameters<RolloutCoordination['sync']>[0]) {
    this.reports = [...state.reports];
    this.draining = state.draining.map((d) => ({
      revision: d.revision,
      replacementRevision: d.replacementRevision,
    }));
    return Promise.resolve({ admissions: this.admissions, leaderKnown: true });
  }
}

describe('StaticPodReconciler rollouts (kubelet and coordinator fakes, a real directory)', () => {
  const root = useTempDir('podmin-rollout');

  it('surges the new revision beside the old one only when admitted, drains the old one, then removes it', async () => {
    const store = new InMemoryObjectStore();
    const paths = nodePaths(root());
    fs.mkdirSync(paths.manifests, { recursive: true });
    const kubelet = new FakeKubelet(paths.manifests);
    const coordination = new FakeCoordination();
    const identity = new FakeIdentity();
    let nowMs = Date.parse('2026-12-03T10:00:00Z');
    const reconciler = new StaticPodReconciler(
      { cluster: 'demo', nodegroup: 'workers', nodeAddress: 'fd00::1', paths },
      store,
      secrets,
      identity,
      services,
      () => new Date(nowMs),
      { kubelet, coordination },
    );
    const v1 = (
      await commitDesiredState(store, {
        deploy: [buildDeployment(manifest('v1'), { source: 't', name: 'web' })],
      })
    )['workers/web']!.pod;
    await reconciler.reconcileOnce();
    expect(fs.readdirSync(paths.manifests)).toEqual(['web.yaml']);
    const r1 = kubelet.revisionOf('web.yaml');
    kubelet.ready.add(r1);

    const v2 = (
      await commitDesiredState(store, {
        deploy: [buildDeployment(manifest('v2'), { source: 't', name: 'web' })],
      })
    )['workers/web']!.pod;
    // Not admitted: the node keeps v1 and says what it runs.
    await reconciler.reconcileOnce();
    expect(fs.readdirSync(paths.manifests)).toEqual(['web.yaml']);
    expect(coordination.reports).toEqual([
      { deployment: 'workers/web', pods: [{ pod: v1, available: true }], failed: null },
    ]);
    expect(reconciler.rolloutActive).toBe(true);

    coordination.admissions = [
      { deployment: 'workers/web', target: v2, attempt: 1, admitted: true, halted: false },
    ];
    await reconciler.reconcileOnce();
    const files = fs.readdirSync(paths.manifests).sort();
    expect(files).toHaveLength(2);
    const surgeFile = files.find((f) => f !== 'web.yaml') as string;
    const r2 = kubelet.revisionOf(surgeFile);
    expect(surgeFile).toBe(`${surgeName('web', r2)}.yaml`);
    // Both run as the same workload: one identity, the secrets of both revisions.
    expect(new Set(identity.ensured)).toEqual(new Set(['web']));
    expect(fs.readdirSync(path.join(paths.workloads, 'web/secrets')).sort()).toEqual(
      [r1, r2].sort(),
    );

    kubelet.ready.add(r2);
    await reconciler.reconcileOnce();
    // The old Pod leaves the backends first, once its replacement is Ready; it stays published.
    expect(coordination.draining).toEqual([{ revision: r1, replacementRevision: r2 }]);
    expect(fs.readdirSync(paths.manifests)).toHaveLength(2);

    nowMs += ROLLOUT_DRAIN_MS;
    await reconciler.reconcileOnce();
    expect(fs.readdirSync(paths.manifests)).toEqual([surgeFile]);
    expect(fs.readdirSync(path.join(paths.workloads, 'web/secrets'))).toEqual([r2]);
    expect(coordination.reports[0]?.pods).toEqual([{ pod: v2, available: true }]);
    expect(reconciler.applied().deployments[0]).toMatchObject({
      deployment: 'workers/web',
      fault: null,
    });

    // A restarted agent adopts what runs: the surge Pod keeps its name, nothing is republished.
    const restarted = new StaticPodReconciler(
      { cluster: 'demo', nodegroup: 'workers', nodeAddress: 'fd00::1', paths },
      store,
      secrets,
      new FakeIdentity(),
      services,
      () => new Date(nowMs),
      { kubelet, coordination },
    );
    await restarted.reconcileOnce();
    expect(fs.readdirSync(paths.manifests)).toEqual([surgeFile]);
  });
});
