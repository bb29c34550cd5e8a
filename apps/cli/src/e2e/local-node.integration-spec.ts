import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { daemonSetManifest, freeLoopbackPort, waitFor } from '@podmin/testing';
import { deployArgs, makeSandbox, type CliSandbox } from './cli-harness';

describe('the local provider as a real node', () => {
  let sandbox: CliSandbox;
  let nodeRoot: string;
  beforeAll(async () => {
    const [health, registry, dns, coordination] = await Promise.all([
      freeLoopbackPort(),
      freeLoopbackPort(),
      freeLoopbackPort(),
      freeLoopbackPort(),
    ]);
    sandbox = makeSandbox({
      PODMIN_LOCAL_HEALTH_ADDRESS: `127.0.0.1:${health}`,
      PODMIN_LOCAL_REGISTRY_LISTEN: `127.0.0.1:${registry}`,
      PODMIN_LOCAL_DNS_LISTEN: `127.0.0.1:${dns}`,
      PODMIN_LOCAL_COORDINATION_PORT: String(coordination),
    });
    expect((await sandbox.run(['connect', 'demo', '--provider', 'local'])).code).toBe(0);
  });
  afterAll(async () => {
    await sandbox.run(['teardown']);
    sandbox.cleanup();
  });

  it('setup starts the agent, which turns a deploy with a Service and a secret into a static Pod with identity and secret files', async () => {
    const setup = await sandbox.run(['setup']);
    expect(setup.stderr).toContain('podmin-agent is ready');
    expect(setup.code).toBe(0);
    nodeRoot = setup.stdout.trim();
    expect(nodeRoot).toBe(path.join(sandbox.dataHome, 'podmin', 'nodes', 'demo', 'default'));
    const state = JSON.parse(
      fs.readFileSync(path.join(nodeRoot, 'run/podmin/agent.json'), 'utf8'),
    ) as { pid: number };
    expect(() => process.kill(state.pid, 0)).not.toThrow();

    // Run again with -o json: the same node, its shape pinned (README "Output and exit codes").
    const again = await sandbox.run(['setup', '-o', 'json']);
    expect(again.stderr).toContain('already running');
    expect(again.stderr).toContain('Kept existing /demo/_system/workload-ca-key');
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({
      cluster: 'demo',
      provider: 'local',
      nodegroups: ['default'],
      nodeRoot,
    });

    const secretFile = path.join(sandbox.cwd, 'db-url');
    fs.writeFileSync(secretFile, 'postgres://db');
    expect(
      (await sandbox.run(['secret', 'create', 'db-url', '--for', 'web', '--from-file', secretFile]))
        .code,
    ).toBe(0);
    fs.writeFileSync(
      path.join(sandbox.cwd, 'web.yaml'),
      daemonSetManifest({ namespace: 'default', secret: 'db-url', servicePort: 443 }),
    );
    expect((await sandbox.run(deployArgs('web', 'default', '-f', 'web.yaml'))).code).toBe(0);
    const manifestFile = path.join(nodeRoot, 'etc/podmin/manifests/web.yaml');
    const manifest = await waitFor(
      () => (fs.existsSync(manifestFile) ? fs.readFileSync(manifestFile, 'utf8') : undefined),
      'the static Pod',
    );
    expect(manifest).toContain('podmin.dev/identity-revision');
    const identity = path.join(nodeRoot, 'run/podmin/workloads/web/identity');
    execFileSync('openssl', [
      'verify',
      '-CAfile',
      path.join(identity, 'ca.crt'),
      path.join(identity, 'tls.crt'),
    ]);
    const secretDir = /path: (\S+aws-parameter-store)/.exec(manifest)?.[1] as string;
    expect(fs.readFileSync(path.join(secretDir, 'db-url'), 'utf8')).toBe('postgres://db');
    expect(fs.statSync(path.join(secretDir, 'db-url')).mode & 0o777).toBe(0o444);

    expect((await sandbox.run(['delete', 'web', '-g', 'default'])).code).toBe(0);
    await waitFor(
      () => (fs.existsSync(manifestFile) ? undefined : true),
      'the static Pod to be removed',
    );
    await waitFor(
      () => (fs.existsSync(path.join(nodeRoot, 'run/podmin/workloads/web')) ? undefined : true),
      'workload files to be removed',
    );

    const teardown = await sandbox.run(['teardown']);
    expect(teardown.stderr).toContain('Stopped podmin-agent');
    await waitFor(() => {
      try {
        process.kill(state.pid, 0);
        return undefined;
      } catch {
        return true;
      }
    }, 'the agent to exit');
  });
});
