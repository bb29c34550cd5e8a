import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { RecordingReporter } from '@podmin/cli-util-io';
import { freeLoopbackPort } from '@podmin/testing';
import { hasCode } from '@podmin/util-errors';
import { startLocalNode, stopLocalNode, type LocalNodeOptions } from './local-node';
import { localNodeLayout } from './node-layout';

const FIXTURES = path.join(__dirname, '__fixtures__');

describe('startLocalNode with real processes on loopback', () => {
  let dataDir: string;
  let options: LocalNodeOptions;
  beforeEach(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-local-node-'));
    const [health, registry] = await Promise.all([freeLoopbackPort(), freeLoopbackPort()]);
    options = {
      context: {
        cluster: 'beta',
        provider: 'local',
        region: 'local',
        bucket: path.join(dataDir, 'bucket'),
        secretsProvider: 'aws-parameter-store',
      },
      nodegroup: 'default',
      dataDir,
      agentProgram: path.join(FIXTURES, 'stand-in-agent.cjs'),
      secretsFile: path.join(dataDir, 'secrets.json'),
      healthAddress: `127.0.0.1:${health}`,
      registryListen: `127.0.0.1:${registry}`,
      dnsListen: '127.0.0.1:1053',
      readyTimeoutMs: 20_000,
    };
  });
  afterEach(async () => {
    await stopLocalNode(options, new RecordingReporter());
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('is ready once the agent it started answers as itself', async () => {
    const node = await startLocalNode(options, new RecordingReporter());
    expect(node.started).toBe(true);
    const identity = (await (await fetch(`http://${options.healthAddress}/readyz`)).json()) as {
      agent: { pid: number; nodeRoot: string };
    };
    expect(identity.agent).toMatchObject({ pid: node.pid, nodeRoot: node.layout.root });
  });

  it('reports an agent that dies of EADDRINUSE behind a silent listener without waiting', async () => {
    // Accepts connections and closes them: it holds the port but answers no HTTP.
    const holder = net.createServer((socket) => socket.destroy());
    const port = Number(options.healthAddress.split(':')[1]);
    await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
    try {
      const started = Date.now();
      const err = await startLocalNode(options, new RecordingReporter()).catch((e: unknown) => e);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(hasCode(err, 'ALREADY_EXISTS')).toBe(true);
      expect((err as Error).message).toBe(
        `starting podmin-agent for beta/default: ${options.healthAddress} is held by something that is not a podmin-agent (it does not answer HTTP); this cluster's agent is not running`,
      );
      expect((err as { hint: string }).hint).toContain(`ss -ltnp 'sport = :${port}'`);
      expect(holder.listening).toBe(true);
      const layout = localNodeLayout(dataDir, 'beta', 'default');
      expect(fs.existsSync(layout.stateFile)).toBe(false);
      expect(fs.existsSync(layout.pidFile)).toBe(false);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  it('reports an agent that exits for its own reason with its exit code and log, without waiting', async () => {
    const started = Date.now();
    const err = await startLocalNode(
      { ...options, agentProgram: path.join(FIXTURES, 'exiting-agent.cjs') },
      new RecordingReporter(),
    ).catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(hasCode(err, 'IO_ERROR')).toBe(true);
    expect((err as Error).message).toMatch(
      /^starting podmin-agent: it exited \(code 3\); log \S+podmin-agent\.log:\nexiting-agent: cannot start$/,
    );
  });
});
