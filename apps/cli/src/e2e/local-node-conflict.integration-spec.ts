import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { freeLoopbackPort, waitFor } from '@podmin/testing';
import { makeSandbox, type CliSandbox } from './cli-harness';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The pid `podmin setup` reported starting, from its stderr. */
function startedPid(stderr: string): number {
  const m = /Started podmin-agent \(pid (\d+)\)/.exec(stderr);
  if (!m) throw new Error(`setup did not start an agent:\n${stderr}`);
  return Number(m[1]);
}

describe('two local clusters on one health address', () => {
  let first: CliSandbox;
  let second: CliSandbox;
  let health: string;
  beforeAll(async () => {
    const ports = await Promise.all(Array.from({ length: 7 }, () => freeLoopbackPort()));
    const [healthPort, registry1, registry2, dns1, dns2, coordination1, coordination2] = ports;
    health = `127.0.0.1:${healthPort}`;
    first = makeSandbox({
      PODMIN_LOCAL_HEALTH_ADDRESS: health,
      PODMIN_LOCAL_REGISTRY_LISTEN: `127.0.0.1:${registry1}`,
      PODMIN_LOCAL_DNS_LISTEN: `127.0.0.1:${dns1}`,
      PODMIN_LOCAL_COORDINATION_PORT: String(coordination1),
    });
    second = makeSandbox({
      PODMIN_LOCAL_HEALTH_ADDRESS: health,
      PODMIN_LOCAL_REGISTRY_LISTEN: `127.0.0.1:${registry2}`,
      PODMIN_LOCAL_DNS_LISTEN: `127.0.0.1:${dns2}`,
      PODMIN_LOCAL_COORDINATION_PORT: String(coordination2),
    });
    expect((await first.run(['connect', 'alpha', '--provider', 'local'])).code).toBe(0);
    expect((await second.run(['connect', 'beta', '--provider', 'local'])).code).toBe(0);
  });
  afterAll(async () => {
    await first.run(['teardown']);
    await second.run(['teardown']);
    first.cleanup();
    second.cleanup();
  });

  it('fails the second setup naming the running agent, stops its own and leaves the first serving', async () => {
    const setup = await first.run(['setup']);
    expect(setup.stderr).toContain('podmin-agent is ready');
    expect(setup.code).toBe(0);
    const firstRoot = setup.stdout.trim();
    const firstPid = startedPid(setup.stderr);

    const clash = await second.run(['setup']);
    expect(clash.code).toBe(1);
    expect(clash.stderr).not.toContain('podmin-agent is ready');
    expect(clash.stderr).toContain(
      `Error: starting podmin-agent for beta/default: ${health} is held by another podmin-agent (cluster alpha, nodegroup default, node root ${firstRoot}, pid ${firstPid}, version `,
    );
    // Another configuration's agent: the hint says where to tear it down, or which pid to kill.
    expect(clash.stderr).toContain(
      `Hint: Stop that agent with \`podmin teardown\` in cluster alpha's context (the Podmin configuration whose data directory is ${path.join(first.dataHome, 'podmin')}) or \`kill ${firstPid}\``,
    );
    const secondPid = startedPid(clash.stderr);
    expect(secondPid).not.toBe(firstPid);
    await waitFor(
      () => (alive(secondPid) ? undefined : true),
      "the second cluster's agent to exit",
    );
    const secondRoot = path.join(second.dataHome, 'podmin', 'nodes', 'beta', 'default');
    expect(fs.existsSync(path.join(secondRoot, 'run/podmin/agent.json'))).toBe(false);

    // The first cluster's agent still answers, as itself, and its setup still finds it.
    expect(alive(firstPid)).toBe(true);
    const identity = await fetch(`http://${health}/identity`);
    expect(await identity.json()).toMatchObject({
      name: 'podmin-agent',
      cluster: 'alpha',
      nodegroup: 'default',
      nodeRoot: firstRoot,
      pid: firstPid,
    });
    expect((await fetch(`http://${health}/readyz`)).status).toBe(200);
    const again = await first.run(['setup']);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain(
      `podmin-agent is already running for alpha/default (pid ${firstPid})`,
    );
  });

  it('names a listener that is not a podmin-agent', async () => {
    const server = http.createServer((_req, res) => res.writeHead(404).end('nothing here'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const taken = `127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      const clash = await second.run(['setup'], { PODMIN_LOCAL_HEALTH_ADDRESS: taken });
      expect(clash.code).toBe(1);
      expect(clash.stderr).toContain(
        `Error: starting podmin-agent for beta/default: ${taken} is held by something that is not a podmin-agent (/readyz answered HTTP 404)`,
      );
      expect(clash.stderr).toContain(`Hint: Stop it (find it with \`ss -ltnp 'sport = :`);
      const pid = startedPid(clash.stderr);
      await waitFor(() => (alive(pid) ? undefined : true), 'the agent setup started to exit');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
