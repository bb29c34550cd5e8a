import type { KubeletPod } from '@podmin/agent-data-access-kubelet-pods';
import { parseReceipt } from '@podmin/util-receipts';
import type { AppliedState } from '../reconcile-outcome';
import {
  ReceiptWriter,
  composeReceipt,
  kubeletReason,
  type KubeletReport,
  type KubeletView,
} from './receipt-writer';

const who = { nodegroup: 'workers', node: 'i-0abc', agentVersion: '1.2.3' };

const applied = (over: Partial<AppliedState['deployments'][number]> = {}): AppliedState => ({
  indexEtag: '"e1"',
  error: null,
  deployments: [
    {
      deployment: 'workers/web',
      revision: 'abcdef012345',
      published: { namespace: 'product', annotation: 'rev-web-2' },
      identityExpiry: '2026-01-03T00:00:00Z',
      fault: null,
      ...over,
    },
  ],
});

const kubeletPod = (over: Partial<KubeletPod> = {}): KubeletPod => ({
  uid: 'u1',
  name: 'web-node',
  namespace: 'product',
  labels: {},
  annotations: { 'podmin.dev/revision': 'rev-web-2' },
  phase: 'Running',
  ready: true,
  podIPs: [],
  containers: [
    {
      name: 'app',
      ready: true,
      state: 'running',
      image: 'x',
      imageID: '',
      containerID: '',
      restartCount: 2,
    },
  ],
  ...over,
});

/** Kubelet view fake returning whatever report the test sets. */
class FakeKubelet implements KubeletView {
  report_: KubeletReport = { state: 'absent', pods: [] };
  report(): Promise<KubeletReport> {
    return Promise.resolve(this.report_);
  }
  /** Nothing to release. */
  readonly close = (): undefined => undefined;
}

/** Receipt sink fake recording every PUT; can be made to fail. */
class RecordingSink {
  readonly puts: Array<{ key: string; body: string }> = [];
  failing = false;
  put(key: string, body: Buffer | string): Promise<string> {
    if (this.failing) return Promise.reject(new Error('AccessDenied'));
    this.puts.push({ key, body: body.toString() });
    return Promise.resolve('"etag"');
  }
}

describe('composeReceipt', () => {
  const at = new Date('2026-01-02T00:00:00Z');

  it('reports applied revisions with Ready unknown when there is no kubelet Pods API', () => {
    const r = composeReceipt(who, applied(), { state: 'absent', pods: [] }, at, 300_000);
    expect(r).toMatchObject({ kubelet: 'absent', indexEtag: '"e1"', heartbeatSeconds: 300 });
    expect(r.pods).toEqual([
      {
        deployment: 'workers/web',
        revision: 'abcdef012345',
        ready: null,
        restarts: null,
        reason: null,
        identityExpiry: '2026-01-03T00:00:00Z',
      },
    ]);
  });

  it('takes Ready and restarts from the kubelet Pod of the published revision only', () => {
    const ready = composeReceipt(who, applied(), { state: 'ok', pods: [kubeletPod()] }, at, 1000);
    expect(ready.pods[0]).toMatchObject({ ready: true, restarts: 2, reason: null });
    // An old revision still running is not the new one being Ready.
    const old = kubeletPod({ annotations: { 'podmin.dev/revision': 'rev-web-1' } });
    const pending = composeReceipt(who, applied(), { state: 'ok', pods: [old] }, at, 1000);
    expect(pending.pods[0]).toMatchObject({ ready: false, restarts: null });
  });

  it('names image pull and crash loop reasons with their message, the agent fault first', () => {
    const pulling = kubeletPod({
      ready: false,
      containers: [
        {
          name: 'app',
          ready: false,
          state: 'waiting',
          reason: 'ImagePullBackOff',
          message: 'Back-off pulling image "nope:v9"',
          image: 'nope:v9',
          imageID: '',
          containerID: '',
          restartCount: 0,
        },
      ],
    });
    expect(kubeletReason(pulling)).toBe(
      'ImagePullBackOff (container app): Back-off pulling image "nope:v9"',
    );
    const r = composeReceipt(who, applied(), { state: 'ok', pods: [pulling] }, at, 1000);
    expect(r.pods[0]).toMatchObject({
      ready: false,
      reason: expect.stringContaining('ImagePullBackOff') as string,
    });
    const faulted = composeReceipt(
      who,
      applied({ fault: 'fetching /demo/product/web/token: no such secret' }),
      { state: 'ok', pods: [pulling] },
      at,
      1000,
    );
    expect(faulted.pods[0]?.reason).toBe('fetching /demo/product/web/token: no such secret');
    expect(
      kubeletReason(
        kubeletPod({
          containers: [
            { ...pulling.containers[0]!, state: 'waiting', reason: 'ContainerCreating' },
          ],
        }),
      ),
    ).toBeNull();
  });
});

describe('ReceiptWriter', () => {
  const timing = { heartbeatMs: 300_000, minIntervalMs: 10_000, pollMs: 2_000 };
  let t: number;
  let sink: RecordingSink;
  let kubelet: FakeKubelet;
  let writer: ReceiptWriter;
  beforeEach(() => {
    t = Date.parse('2026-01-02T00:00:00Z');
    sink = new RecordingSink();
    kubelet = new FakeKubelet();
    writer = new ReceiptWriter(who, sink, kubelet, timing, () => new Date(t));
  });

  it('writes its own key, strict-parsable, without a condition', async () => {
    await expect(writer.tick(applied())).resolves.toBe('written');
    expect(sink.puts.map((p) => p.key)).toEqual(['status/workers/i-0abc.json']);
    const parsed = parseReceipt(sink.puts[0]!.body, { nodegroup: 'workers', node: 'i-0abc' });
    expect(parsed.agentVersion).toBe('1.2.3');
  });

  it('writes once per change plus a heartbeat: 12 PUTs for an unchanged hour of 2 s looks', async () => {
    for (let i = 0; i < 1800; i++) {
      await writer.tick(applied());
      t += 2_000;
    }
    expect(sink.puts).toHaveLength(12);
    expect(writer.writes).toBe(12);
  });

  it('coalesces changes within the minimum interval and writes the latest after it', async () => {
    await writer.tick(applied());
    t += 2_000;
    kubelet.report_ = { state: 'ok', pods: [kubeletPod({ ready: false })] };
    await expect(writer.tick(applied())).resolves.toBe('deferred');
    t += 2_000;
    kubelet.report_ = { state: 'ok', pods: [kubeletPod()] };
    await expect(writer.tick(applied())).resolves.toBe('deferred');
    t += 6_000;
    await expect(writer.tick(applied())).resolves.toBe('written');
    expect(sink.puts).toHaveLength(2);
    expect(parseReceipt(sink.puts[1]!.body).pods[0]).toMatchObject({ ready: true });
    // A Pod flapping every 2 s for ten minutes costs at most one PUT per 10 s.
    for (let i = 0; i < 300; i++) {
      t += 2_000;
      kubelet.report_ = { state: 'ok', pods: [kubeletPod({ ready: i % 2 === 0 })] };
      await writer.tick(applied());
    }
    expect(sink.puts.length).toBeLessThanOrEqual(2 + 60);
    expect(sink.puts.length).toBeGreaterThan(50);
  });

  it('retries a failed write no sooner than the minimum interval', async () => {
    sink.failing = true;
    await expect(writer.tick(applied())).rejects.toThrow('AccessDenied');
    sink.failing = false;
    t += 2_000;
    await expect(writer.tick(applied())).resolves.toBe('deferred');
    t += 8_000;
    await expect(writer.tick(applied())).resolves.toBe('written');
    expect(writer.writes).toBe(2);
  });
});
