import fs from 'node:fs';
import { isIP } from 'node:net';
import { KubeletPodsClient, type KubeletPod } from './kubelet-pods';

// Run by tools/node-tier.sh against a real kubelet 1.36 after `podmin deploy`:
//   PODMIN_NODE_TIER_PODS_SOCKET  kubelet's pods-api.sock
//   PODMIN_NODE_TIER_POD          the static Pod's name (<deployment>-<node>)
//   PODMIN_NODE_TIER_DEPLOYED_AT  when `podmin deploy` returned (ms since the epoch)
//   PODMIN_NODE_TIER_REPORT       file to write {readyMs, uid, podIP} to
function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} must be set (this suite is run by tools/node-tier.sh)`);
  return value;
}
const socket = required('PODMIN_NODE_TIER_PODS_SOCKET');
const podName = required('PODMIN_NODE_TIER_POD');
const deployedAt = Number(required('PODMIN_NODE_TIER_DEPLOYED_AT'));
const reportFile = required('PODMIN_NODE_TIER_REPORT');

describe("kubelet's Pods API through KubeletPodsClient", () => {
  const client = new KubeletPodsClient(socket);
  let ready: KubeletPod | undefined;
  afterAll(() => client.close());

  it('watches the deployed Pod until kubelet reports it Ready', async () => {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), 150_000);
    let synced = false;
    try {
      for await (const event of client.watch(abort.signal)) {
        if (event.type === 'initial-sync-complete') synced = true;
        else if (event.type !== 'deleted' && event.pod.name === podName && event.pod.ready)
          ready = event.pod;
        // The Pod may already be Ready among the initial ADDED events, before the sync marker.
        if (synced && ready) abort.abort();
      }
    } finally {
      clearTimeout(timer);
    }
    expect(synced).toBe(true);
    expect(ready?.name).toBe(podName);
    // kubelet's own Ready transition time (1 s resolution) when it has one, else when seen.
    const readyAt = ready?.readyTransition?.getTime() ?? Date.now();
    const readyMs = Math.max(0, readyAt - deployedAt);
    fs.writeFileSync(
      reportFile,
      JSON.stringify({ readyMs, uid: ready?.uid, podIP: ready?.podIPs[0] ?? '' }) + '\n',
    );
  });

  it('lists it Running and Ready with an IPv6 address and running, ready containers', async () => {
    const pod = (await client.list()).find((p) => p.name === podName);
    expect(pod).toBeDefined();
    expect(pod?.phase).toBe('Running');
    expect(pod?.ready).toBe(true);
    expect(pod?.namespace).toBe('default');
    expect(isIP(pod?.podIPs[0] ?? '')).toBe(6);
    expect(pod?.containers.length).toBeGreaterThan(0);
    for (const c of pod?.containers ?? []) {
      expect(c).toMatchObject({ state: 'running', ready: true });
      // Deploys pin images by digest (DESIGN §6.40): for a `name@sha256:…` reference kubelet
      // reports the image ID; a tag reference (`--no-pin`) is reported by name.
      expect(c.image).toMatch(/^(registry\.podmin\.internal\/apps\/|sha256:[0-9a-f]{64}$)/);
    }
    expect(pod?.annotations['podmin.dev/revision']).toMatch(/^[0-9a-f]{32}$/);
  });

  it('gets it by UID', async () => {
    expect(ready?.uid).toBeTruthy();
    const pod = await client.get(ready?.uid ?? '');
    expect(pod?.name).toBe(podName);
    expect(pod?.ready).toBe(true);
  });
});
