import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { LocalDirectoryObjectStore } from '@podmin/data-access-object-store';
import { type BuiltAgent, commitDesiredState, daemonSetManifest, waitFor } from '@podmin/testing';
import { buildDeployment } from '@podmin/util-manifest';
import {
  makeLocalNode,
  startLocalAgent,
  waitReady,
  type LocalNode,
} from './__fixtures__/local-node';

const MANIFEST = daemonSetManifest();

// Issue 21: an identity the node cannot write (EPERM) must reach the staticpod health detail
// with its path and errno, not as "internal error". An immutable directory (chattr +i) gives
// EPERM even to root, which these tests run as.
describe('podmin-agent reports an identity EPERM with its cause', () => {
  let node: LocalNode;
  let immutable: string;
  let agent: BuiltAgent | undefined;

  beforeAll(async () => {
    node = await makeLocalNode('podmin-agent-eperm');
    immutable = path.join(node.nodeRoot, 'run/podmin/workloads/web');
    fs.mkdirSync(immutable, { recursive: true });
    execFileSync('chattr', ['+i', immutable]);
  });

  afterAll(() => {
    agent?.child.kill('SIGKILL');
    execFileSync('chattr', ['-i', immutable]);
    node.cleanup();
  });

  it('shows the path and errno in /healthz', async () => {
    const started = await startLocalAgent(node);
    agent = started.agent;
    const healthPort = started.ports.health;
    try {
      await waitReady(agent, healthPort);
      const d = buildDeployment(MANIFEST, { source: 'test', name: 'web', nodegroup: 'default' });
      await commitDesiredState(new LocalDirectoryObjectStore(node.bucket), { deploy: [d] });
      const detail = await waitFor(async () => {
        const res = await fetch(`http://127.0.0.1:${healthPort}/healthz`);
        if (res.status !== 503) return undefined;
        const body = (await res.json()) as {
          services: Array<{ name: string; detail: string | null }>;
        };
        return body.services.find((s) => s.name === 'staticpod')?.detail ?? undefined;
      }, 'unhealthy staticpod');
      expect(detail).not.toContain('internal error');
      expect(detail).toContain('EPERM');
      // The first operation the immutable directory refuses is named with its path: creating
      // identity-generations, or (since Pod directories are kept private) the chmod of the
      // directory itself.
      expect(detail).toMatch(/(chmod|mkdir|open|rename) \//);
      expect(detail).toContain(immutable);
      expect(detail).toMatch(/web/);
    } catch (err) {
      console.error(agent.tail(30));
      throw err;
    }
  });
});
