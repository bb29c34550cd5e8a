import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { connectedLocalSandbox, PODMIN_BIN, type CliSandbox } from './cli-harness';

// `podmin logs` through the built CLI on a local context, against a node laid out as the agent
// and kubelet leave it: the agent's static Pod manifests and kubelet's CRI log files.
// (The node tier reads a real kubelet's files the same way.)
describe('podmin logs (local provider)', () => {
  let sandbox: CliSandbox;
  let podLogDir: string;
  let appLog: string;
  const at = (agoS: number) => new Date(Date.now() - agoS * 1000).toISOString();
  beforeAll(async () => {
    ({ sandbox } = await connectedLocalSandbox());
    podLogDir = path.join(sandbox.home, 'var-log-pods');
    const manifests = path.join(sandbox.dataHome, 'podmin/nodes/demo/default/etc/podmin/manifests');
    fs.mkdirSync(manifests, { recursive: true });
    fs.writeFileSync(
      path.join(manifests, 'web.yaml'),
      [
        'apiVersion: v1',
        'kind: Pod',
        'metadata:',
        '  name: web',
        '  namespace: product',
        '  annotations: { podmin.dev/deployment: default/web }',
        'spec:',
        '  containers: [{ name: app, image: x }, { name: sidecar, image: y }]',
        '',
      ].join('\n'),
    );
    const dir = (container: string) => {
      const d = path.join(podLogDir, 'product_web-default_0123abcd', container);
      fs.mkdirSync(d, { recursive: true });
      return d;
    };
    appLog = path.join(dir('app'), '0.log');
    fs.writeFileSync(
      appLog,
      `${at(3600)} stdout F an hour ago\n${at(30)} stdout P half a ` +
        `\n${at(29)} stderr F an error\n${at(28)} stdout F line\n`,
    );
    fs.writeFileSync(path.join(dir('sidecar'), '0.log'), `${at(20)} stdout F sidecar up\n`);
  });
  afterAll(() => sandbox.cleanup());
  const logs = (args: string[]) =>
    sandbox.run(['logs', 'web', '-g', 'default', ...args], { PODMIN_POD_LOG_DIR: podLogDir });

  it('prints every container’s lines merged by time, each with its Pod and container', async () => {
    const out = await logs([]);
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    expect(out.stdout).toBe(
      [
        '[web/app] an hour ago',
        '[web/app] half a line',
        '[web/app] an error',
        '[web/sidecar] sidecar up',
        '',
      ].join('\n'),
    );
  });

  it('narrows by container, --tail and --since, and prints times with --timestamps', async () => {
    expect((await logs(['-c', 'app', '--tail', '1'])).stdout).toBe('half a line\n');
    expect((await logs(['-c', 'app', '--since', '5m'])).stdout).toBe('half a line\nan error\n');
    const stamped = (await logs(['-c', 'sidecar', '--timestamps'])).stdout;
    expect(stamped).toMatch(/^\d{4}-\d\d-\d\dT\S+Z sidecar up\n$/);
  });

  it('follows new lines until interrupted', async () => {
    const child = spawn(
      process.execPath,
      [PODMIN_BIN, 'logs', 'web', '-g', 'default', '-c', 'app', '-f', '--tail', '0'],
      { cwd: sandbox.cwd, env: { ...sandbox.env, PODMIN_POD_LOG_DIR: podLogDir } },
    );
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    await new Promise((r) => setTimeout(r, 1500));
    fs.appendFileSync(appLog, `${at(0)} stdout F followed\n`);
    for (let i = 0; i < 100 && !stdout.includes('followed'); i++)
      await new Promise((r) => setTimeout(r, 50));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(stdout).toBe('followed\n');
  });

  it('says so when a Pod runs but none of its containers has written a log yet', async () => {
    const manifests = path.join(sandbox.dataHome, 'podmin/nodes/demo/default/etc/podmin/manifests');
    fs.writeFileSync(
      path.join(manifests, 'api.yaml'),
      'metadata: { name: api, namespace: product, annotations: { podmin.dev/deployment: default/api } }\nspec: { containers: [{ name: app, image: x }] }\n',
    );
    const out = await sandbox.run(['logs', 'api', '-g', 'default'], {
      PODMIN_POD_LOG_DIR: podLogDir,
    });
    expect(out.code).toBe(0);
    expect(out.stdout).toBe('');
    expect(out.stderr).toContain('reading logs of default/api: no container has written a log yet');
    fs.rmSync(path.join(manifests, 'api.yaml'));
  });

  it('exits 1 naming what is missing, and 2 for a bad flag value', async () => {
    const none = await sandbox.run(['logs', 'api', '-g', 'default'], {
      PODMIN_POD_LOG_DIR: podLogDir,
    });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('reading logs of default/api: node default runs no Pod of it');
    const container = await logs(['-c', 'db']);
    expect(container.code).toBe(1);
    expect(container.stderr).toContain('Pod web has no container "db"');
    expect(container.stderr).toContain('Its containers: app, sidecar.');
    const node = await logs(['--node', 'elsewhere']);
    expect(node.code).toBe(1);
    expect(node.stderr).toContain('no node "elsewhere"');
    const tail = await logs(['--tail', '-3']);
    expect(tail.code).toBe(2);
    expect(tail.stderr).toContain('--tail: -3 is not a whole number of lines ≥ 0');
    const since = await logs(['--since', 'yesterday']);
    expect(since.code).toBe(2);
    expect(since.stderr).toContain('--since: "yesterday" is not a duration');
  });
});
