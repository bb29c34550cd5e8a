import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const BIN = path.resolve(__dirname, '../../../dist/bin/podmin-agent.cjs');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function until<T>(
  probe: () => Promise<T | undefined>,
  what: string,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function run(
  args: string[],
  env: Record<string, string> = {},
): { child: ChildProcess; output: () => string; exited: Promise<number> } {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? -1)));
  return { child, output: () => output, exited };
}

describe('podmin-agent (built)', () => {
  let bucket: string;
  beforeAll(() => {
    bucket = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-agent-'));
  });
  afterAll(() => fs.rmSync(bucket, { recursive: true, force: true }));

  it('exits non-zero naming every bad flag', async () => {
    const { exited, output } = run([
      '--provider',
      'aws',
      '--bucket',
      'B',
      '--cluster',
      'Demo',
      '--ipv6-prefix',
      'fd00:1:2:3:4::/80',
    ]);
    expect(await exited).toBe(2);
    for (const flag of ['--bucket', '--region', '--cluster', '--nodegroup', '--ipv6-prefix'])
      expect(output()).toContain(`${flag}:`);
  });

  it('supervises the registry, restarts it after a crash and shuts down on SIGTERM', async () => {
    const [healthPort, registryPort] = await Promise.all([freePort(), freePort()]);
    const agent = run(
      [
        '--provider',
        'local',
        '--bucket',
        bucket,
        '--region',
        'local',
        '--cluster',
        'demo',
        '--nodegroup',
        'default',
        '--ipv6-prefix',
        'fd00:1:2:3:4::/80',
      ],
      {
        PODMIN_AGENT_HEALTH_ADDRESS: `127.0.0.1:${healthPort}`,
        PODMIN_AGENT_REGISTRY_LISTEN: `127.0.0.1:${registryPort}`,
      },
    );
    try {
      const ready = await until(async () => {
        const res = await fetch(`http://127.0.0.1:${healthPort}/readyz`);
        return res.status === 200
          ? ((await res.json()) as { services: Array<{ name: string; pid: number }> })
          : undefined;
      }, 'readiness');
      expect((await fetch(`http://127.0.0.1:${registryPort}/v2/`)).status).toBe(200);
      const registryPid = ready.services.find((s) => s.name === 'registry')?.pid;
      expect(registryPid).toBeGreaterThan(0);

      process.kill(registryPid as number, 'SIGKILL');
      await until(
        async () =>
          (await fetch(`http://127.0.0.1:${healthPort}/healthz`)).status === 503 ? true : undefined,
        'unhealthy after crash',
        5_000,
      );
      const restarted = await until(async () => {
        const res = await fetch(`http://127.0.0.1:${healthPort}/readyz`);
        const body = (await res.json()) as {
          services: Array<{ name: string; pid: number; restarts: number }>;
        };
        const registry = body.services.find((s) => s.name === 'registry');
        return res.status === 200 && registry && registry.pid !== registryPid
          ? registry
          : undefined;
      }, 'restart');
      expect(restarted.restarts).toBe(1);

      agent.child.kill('SIGTERM');
      expect(await agent.exited).toBe(0);
      const lines = agent
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { msg: string });
      expect(lines.map((l) => l.msg)).toEqual(
        expect.arrayContaining(['start agent', 'service ready', 'shut down', 'stopped']),
      );
      // Nothing is left listening.
      await expect(fetch(`http://127.0.0.1:${registryPort}/v2/`)).rejects.toThrow();
    } finally {
      agent.child.kill('SIGKILL');
    }
  });
});
