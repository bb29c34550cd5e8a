import 'reflect-metadata';
import dgram from 'node:dgram';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChildMessage } from '@podmin/agent-contracts';
import { agentClient, serviceSocket, type AgentClient } from '@podmin/agent-data-access-grpc';
import { runAgentProcess, type RunningAgentProcess } from '@podmin/agent-data-access-runtime';
import { JsonLogger } from '@podmin/agent-util-logging';
import { describeIf, localAgentArgs, which } from '@podmin/testing';
import { serviceVip } from '@podmin/util-desired-state';
import { TestCoordinator, testSnapshot } from '@podmin/agent-contracts/testing';
import { dig } from './__fixtures__/dig';
import { dnsProcess } from './dns.process';

/** The cluster `localAgentArgs` names. */
const CLUSTER = 'demo';
const WEB = 'web.default.svc.cluster.local';
const API = 'api.default.svc.cluster.local';
const webVip = serviceVip(CLUSTER, 'default', 'web');
const apiVip = serviceVip(CLUSTER, 'default', 'api');

/** Polls `check` every 50 ms until it holds (or fails after `ms`). */
async function eventually(check: () => Promise<boolean> | boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describeIf(
  which('dig') !== undefined,
  'integration:dns',
  'dig is not installed (run tools/setup/apt-deps.sh)',
)('the agent-dns process fed by a real Coordinator gRPC server', () => {
  let root: string;
  let coordinatorSocket: string;
  let coordinator: TestCoordinator | undefined;
  let running: RunningAgentProcess | undefined;
  let client: AgentClient<'dns'>;
  const sent: ChildMessage[] = [];
  const lines: Array<Record<string, unknown>> = [];
  const exits: number[] = [];
  let port = 0;

  const status = () => client.getStatus({}, { timeoutMs: 2000 });
  const lastHealth = () => [...sent].reverse().find((m) => m.type === 'health');

  beforeAll(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-agent-dns-'));
    const runtimeDir = path.join(root, 'run/podmin/agent');
    fs.mkdirSync(runtimeDir, { recursive: true, mode: 0o700 });
    coordinatorSocket = serviceSocket(runtimeDir, 'coordinator');
    coordinator = await TestCoordinator.start(coordinatorSocket);
    running = await runAgentProcess(dnsProcess, {
      argv: localAgentArgs(path.join(root, 'bucket')),
      env: { PODMIN_NODE_ROOT: root, PODMIN_AGENT_DNS_LISTEN: '127.0.0.1:0' },
      channel: { send: (m) => sent.push(m), onDisconnect: () => undefined },
      exit: (code) => exits.push(code),
      onSignal: () => undefined,
      shutdownGraceMs: 2000,
      logger: new JsonLogger({
        write: (l) => lines.push(JSON.parse(l) as Record<string, unknown>),
      }),
    });
    expect(running).toBeDefined();
    client = agentClient('dns', serviceSocket(runtimeDir, 'dns'));
    const address = (await status()).address;
    expect(address).toMatch(/^127\.0\.0\.1:\d+$/);
    port = Number(address.split(':')[1]);
  });

  afterAll(async () => {
    client?.close();
    await running?.shutdown(0);
    coordinator?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('logs which UDP path serves: dgram here, as no worker bundle is beside the source', () => {
    const line = lines.find((l) => l.msg === 'serve Service DNS over UDP');
    expect(line).toMatchObject({ level: 'warn', path: 'dgram' });
    expect(String(line?.reason)).toContain('no UDP worker bundle at');
  });

  it('starts with an empty zone: NXDOMAIN, and the health detail says why', async () => {
    expect(running?.config.cluster).toBe(CLUSTER);
    expect(sent).toContainEqual({ type: 'ready' });
    const r = await dig(port, [WEB, 'AAAA']);
    expect(r.status).toBe('NXDOMAIN');
    expect(r.flags).toContain('aa');
    expect(lastHealth()).toEqual({
      type: 'health',
      healthy: false,
      detail: expect.stringContaining('every name NXDOMAIN') as unknown,
    });
    expect(await status()).toMatchObject({ services: 0, snapshotRevision: '' });
  });

  it('serves the VIP of a Service in the coordinator’s view, TTL 5', async () => {
    coordinator?.setView(
      testSnapshot(1, 'rev-1', [
        { namespace: 'default', name: 'web', vip: webVip, backend: 'fd00:1:2:3:4::10' },
      ]),
    );
    await eventually(async () => (await status()).snapshotRevision === 'rev-1');
    const r = await dig(port, [WEB, 'AAAA']);
    expect(r.status).toBe('NOERROR');
    expect(r.answer).toEqual([`${WEB}. 5 IN AAAA ${webVip}`]);
    expect(lastHealth()).toEqual({ type: 'health', healthy: true });
  });

  it('follows a snapshot whose backends alone changed without changing answers', async () => {
    coordinator?.setView(
      testSnapshot(2, 'rev-2', [{ namespace: 'default', name: 'web', vip: webVip }]),
    );
    await eventually(async () => (await status()).snapshotRevision === 'rev-2');
    expect((await dig(port, [WEB, 'AAAA'])).answer).toEqual([`${WEB}. 5 IN AAAA ${webVip}`]);
    expect((await status()).services).toBe(1);
  });

  it('drops a Service the next view no longer has: NXDOMAIN', async () => {
    coordinator?.setView(
      testSnapshot(3, 'rev-3', [{ namespace: 'default', name: 'api', vip: apiVip }]),
    );
    await eventually(async () => (await status()).snapshotRevision === 'rev-3');
    expect((await dig(port, [WEB, 'AAAA'])).status).toBe('NXDOMAIN');
    expect((await dig(port, [API, 'AAAA'])).answer).toEqual([`${API}. 5 IN AAAA ${apiVip}`]);
  });

  it('keeps answering from the last zone while the coordinator is down, logging once', async () => {
    coordinator?.stop();
    coordinator = undefined;
    const outages = () =>
      lines.filter((l) => String(l['msg']).startsWith('coordinator unreachable'));
    await eventually(() => outages().length > 0);
    // Several retries (250 ms doubling) happen in this time; the outage is logged once.
    await new Promise((r) => setTimeout(r, 2000));
    expect(outages()).toHaveLength(1);
    const r = await dig(port, [API, 'AAAA', '+tcp']);
    expect(r.answer).toEqual([`${API}. 5 IN AAAA ${apiVip}`]);
    expect((await dig(port, [WEB, 'AAAA'])).status).toBe('NXDOMAIN');
    expect(lastHealth()).toEqual({
      type: 'health',
      healthy: false,
      detail: expect.stringContaining(
        'coordinator unreachable; answering from snapshot rev-3',
      ) as unknown,
    });
    expect(exits).toEqual([]);

    fs.rmSync(coordinatorSocket, { force: true });
    coordinator = await TestCoordinator.start(coordinatorSocket);
    coordinator.setView(
      testSnapshot(4, 'rev-4', [
        { namespace: 'default', name: 'api', vip: apiVip },
        { namespace: 'default', name: 'web', vip: webVip },
      ]),
    );
    await eventually(async () => (await status()).snapshotRevision === 'rev-4', 15_000);
    expect(lines.some((l) => l['msg'] === 'coordinator reachable again')).toBe(true);
    expect((await dig(port, [WEB, 'AAAA'])).answer).toEqual([`${WEB}. 5 IN AAAA ${webVip}`]);
    expect(lastHealth()).toEqual({ type: 'health', healthy: true });
  });

  it('reports answered and malformed counts', async () => {
    const before = await status();
    const socket = dgram.createSocket('udp4');
    await new Promise<void>((resolve, reject) =>
      socket.send(Buffer.from([1, 2, 3]), port, '127.0.0.1', (err) =>
        err ? reject(err) : resolve(),
      ),
    );
    socket.close();
    await dig(port, [WEB, 'AAAA']);
    await eventually(async () => (await status()).malformed === before.malformed + 1);
    const after = await status();
    expect(after.answered).toBe(before.answered + 1);
    // Every dig of the earlier cases (eight) was answered and counted.
    expect(before.answered).toBe(8);
    expect(after).toMatchObject({ services: 2, snapshotRevision: 'rev-4' });
  });
});
