import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LocalSecretStore } from '@podmin/data-access-secrets';
import { LocalDirectoryObjectStore } from '@podmin/data-access-object-store';
import { commitDesiredState, freeLoopbackPort, localAgentArgs, waitFor } from '@podmin/testing';
import { buildDeployment } from '@podmin/util-manifest';
import {
  createClusterCa,
  generateWorkloadCaSecretValue,
  serializeClusterCaSecret,
} from '@podmin/util-pki';

const BIN = path.resolve(__dirname, '../../../dist/bin/podmin-agent.cjs');

const MANIFEST = `apiVersion: apps/v1
kind: DaemonSet
metadata: { name: web, namespace: product }
spec:
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec:
      nodeSelector: { podmin.dev/nodegroup: default }
      containers: [{ name: web, image: hello:v1 }]
`;

// Issue 21: an identity the node cannot write (EPERM) must reach the staticpod health detail
// with its path and errno, not as "internal error". An immutable directory (chattr +i) gives
// EPERM even to root, which these tests run as.
describe('podmin-agent reports an identity EPERM with its cause', () => {
  let bucket: string;
  let nodeRoot: string;
  let secretsFile: string;
  let immutable: string;
  let agent: { child: ChildProcess; output: () => string } | undefined;

  beforeAll(async () => {
    bucket = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-agent-eperm-'));
    nodeRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-node-eperm-'));
    secretsFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-secrets-')), 'demo.json');
    const secrets = new LocalSecretStore({ file: secretsFile, provider: 'aws-parameter-store' });
    await secrets.create(
      '/demo/_system/workload-ca-key',
      Buffer.from(generateWorkloadCaSecretValue()),
    );
    await secrets.create(
      '/demo/_system/cluster-ca',
      Buffer.from(serializeClusterCaSecret(await createClusterCa('demo', new Date()))),
    );
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
    const [healthPort, registryPort, dnsPort, coordinationPort] = await Promise.all([
      freeLoopbackPort(),
      freeLoopbackPort(),
      freeLoopbackPort(),
      freeLoopbackPort(),
    ]);
    const child = spawn(process.execPath, [BIN, ...localAgentArgs(bucket)], {
      env: {
        PATH: process.env['PATH'] ?? '',
        PODMIN_AGENT_HEALTH_ADDRESS: `127.0.0.1:${healthPort}`,
        PODMIN_AGENT_REGISTRY_LISTEN: `127.0.0.1:${registryPort}`,
        PODMIN_AGENT_DNS_LISTEN: `127.0.0.1:${dnsPort}`,
        PODMIN_AGENT_COORDINATION_PORT: String(coordinationPort),
        PODMIN_NODE_ADDRESS: '::1',
        PODMIN_NODE_ID: 'node-1',
        PODMIN_NODE_ROOT: nodeRoot,
        PODMIN_LOCAL_SECRETS_FILE: secretsFile,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    agent = { child, output: () => output };
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
      console.error(output.split('\n').slice(-30).join('\n'));
      throw err;
    }
  });
});
