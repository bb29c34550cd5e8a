import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LocalSecretStore } from '@podmin/data-access-secrets';
import { LocalDirectoryObjectStore } from '@podmin/data-access-object-store';
import {
  type BuiltAgent,
  commitDesiredState,
  daemonSetManifest,
  freeAgentPorts,
  localAgentArgs,
  seedClusterSecrets,
  spawnBuiltAgent,
  waitFor,
} from '@podmin/testing';
import { buildDeployment } from '@podmin/util-manifest';

const MANIFEST = daemonSetManifest();

// Issue 21: an identity the node cannot write (EPERM) must reach the staticpod health detail
// with its path and errno, not as "internal error". An immutable directory (chattr +i) gives
// EPERM even to root, which these tests run as.
describe('podmin-agent reports an identity EPERM with its cause', () => {
  let bucket: string;
  let nodeRoot: string;
  let secretsFile: string;
  let immutable: string;
  let agent: BuiltAgent | undefined;

  beforeAll(async () => {
    bucket = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-agent-eperm-'));
    nodeRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-node-eperm-'));
    secretsFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-secrets-')), 'demo.json');
    const secrets = new LocalSecretStore({ file: secretsFile, provider: 'aws-parameter-store' });
    await seedClusterSecrets(secrets, 'demo');
    immutable = path.join(nodeRoot, 'run/podmin/workloads/web');
    fs.mkdirSync(immutable, { recursive: true });
    execFileSync('chattr', ['+i', immutable]);
  });

  afterAll(() => {
    agent?.child.kill('SIGKILL');
    execFileSync('chattr', ['-i', immutable]);
    for (const dir of [bucket, nodeRoot, path.dirname(secretsFile)])
      fs.rmSync(dir, { recursive: true, force: true });
  });

  it('shows the path and errno in /healthz', async () => {
    const ports = await freeAgentPorts();
    const healthPort = ports.health;
    agent = spawnBuiltAgent({
      args: localAgentArgs(bucket),
      nodeRoot,
      ports,
      env: { PODMIN_LOCAL_SECRETS_FILE: secretsFile },
    });
    try {
      await waitFor(
        async () =>
          (await fetch(`http://127.0.0.1:${healthPort}/readyz`)).status === 200 ? true : undefined,
        'readiness',
      );
      const d = buildDeployment(MANIFEST, { source: 'test', name: 'web', nodegroup: 'default' });
      await commitDesiredState(new LocalDirectoryObjectStore(bucket), { deploy: [d] });
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
