import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { clearPodNetwork, podNetwork } from './pod-network';
import { describeUnless } from '@podmin/testing';

// Teardown's last resort for a Pod network containerd did not remove, against the real kernel:
// a namespace mounted under /run/netns with a ptp-style veth (a /128 route on the host side).

const ip = (...args: string[]): string => execFileSync('ip', args, { encoding: 'utf8' });
const unusable =
  process.getuid?.() !== 0
    ? 'needs root (network namespaces)'
    : spawnSync('ip', ['netns', 'list']).status !== 0
      ? 'ip netns does not work here'
      : undefined;

describeUnless(unusable, 'integration:pod-network')(
  'clearPodNetwork with real namespaces and veths',
  () => {
    const tag = randomBytes(3).toString('hex');
    const prefix = `fd00:7e57:${tag.slice(0, 4)}:0:${tag.slice(4)}::/80`;
    const net = prefix.replace('::/80', '::');
    const pods = [1, 2].map((i) => ({
      ns: `podmin-t-${tag}-${i}`,
      veth: `pmt${tag}${i}`,
      address: `${net}${i}`,
    }));
    // Another node's Pod, in another prefix: it must survive.
    const other = { ns: `podmin-t-${tag}-o`, veth: `pmt${tag}o`, address: `fd00:7e58::9` };

    const wire = (p: { ns: string; veth: string; address: string }): void => {
      ip('netns', 'add', p.ns);
      ip('link', 'add', p.veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', p.ns);
      ip('link', 'set', p.veth, 'up');
      ip('-n', p.ns, 'link', 'set', 'eth0', 'up');
      ip('-6', 'route', 'add', `${p.address}/128`, 'dev', p.veth);
    };
    const exists = (dev: string): boolean =>
      spawnSync('ip', ['link', 'show', 'dev', dev]).status === 0;

    beforeAll(() => {
      for (const p of [...pods, other]) wire(p);
    });
    afterAll(() => {
      for (const p of [...pods, other]) {
        spawnSync('ip', ['netns', 'del', p.ns]);
        spawnSync('ip', ['link', 'del', p.veth]);
      }
    });

    it('finds the veths routed inside the Pod prefix and the namespaces behind them', async () => {
      const found = await podNetwork(prefix);
      expect(found.veths).toEqual(pods.map((p) => p.veth).sort());
      expect(found.namespaces).toEqual(pods.map((p) => p.ns).sort());
      expect(await podNetwork(undefined)).toEqual({ veths: [], namespaces: [] });
    });

    it('kills what still runs in the namespaces left mounted, deletes them, and nothing else', async () => {
      // A Pod process whose shim is gone, as after a sandbox containerd did not remove.
      const orphan = spawn('ip', ['netns', 'exec', pods[0]!.ns, 'sleep', '600'], {
        stdio: 'ignore',
      });
      await new Promise((r) => setTimeout(r, 300));
      const found = await podNetwork(prefix);
      const deleted = await clearPodNetwork(found);
      expect(deleted).toEqual([
        `process ${orphan.pid}`,
        ...pods.map((p) => `namespace ${p.ns}`).sort(),
      ]);
      expect(orphan.exitCode ?? orphan.signalCode).toBe('SIGKILL');
      for (const p of pods) {
        expect(fs.existsSync(`/run/netns/${p.ns}`)).toBe(false);
        expect(exists(p.veth)).toBe(false);
      }
      expect(exists(other.veth)).toBe(true);
      expect(fs.existsSync(`/run/netns/${other.ns}`)).toBe(true);
      expect(await clearPodNetwork(await podNetwork(prefix))).toEqual([]);
    }, 30_000);
  },
);
