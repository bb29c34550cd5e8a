import { startHealthServer, type AgentIdentity, type HealthSource } from './health-server';
import type { ServiceStatus } from './supervisor';

/** A health source whose answers the test sets. */
function source(state: { healthy: boolean; ready: boolean }): HealthSource {
  return { healthy: () => state.healthy, ready: () => state.ready, statuses: () => [] };
}

const IDENTITY: AgentIdentity = {
  cluster: 'demo',
  nodegroup: 'default',
  nodeRoot: '/data/podmin/nodes/demo/default',
  pid: 4242,
  version: '1.2.3',
};

describe('startHealthServer', () => {
  it('reports who the agent is on /identity and in the health bodies', async () => {
    const state = { healthy: true, ready: false };
    const server = await startHealthServer(source(state), 0, '127.0.0.1', IDENTITY);
    const base = `http://127.0.0.1:${server.port}`;
    try {
      const identity = await fetch(`${base}/identity`);
      expect(identity.status).toBe(200);
      expect(await identity.json()).toEqual({ name: 'podmin-agent', ...IDENTITY });
      const notReady = await fetch(`${base}/readyz`);
      expect(notReady.status).toBe(503);
      expect(await notReady.json()).toEqual({
        status: 'unavailable',
        services: [],
        agent: { name: 'podmin-agent', ...IDENTITY },
      });
      state.ready = true;
      const ready = await fetch(`${base}/readyz`);
      expect(ready.status).toBe(200);
      expect(((await ready.json()) as { agent: AgentIdentity }).agent.pid).toBe(4242);
      expect((await fetch(`${base}/identity`, { method: 'POST' })).status).toBe(405);
    } finally {
      await server.close();
    }
  });

  it("shows a healthy service's note in /readyz without failing it", async () => {
    const skewed: ServiceStatus = {
      name: 'coordinator',
      state: 'running',
      ready: true,
      healthy: true,
      detail:
        "clock skew: this node's clock is 60 s behind the object store's (over 30 s); check its time synchronisation",
      pid: 7,
      restarts: 0,
      lastExit: null,
    };
    const server = await startHealthServer(
      { healthy: () => true, ready: () => true, statuses: () => [skewed] },
      0,
    );
    try {
      const ready = await fetch(`http://127.0.0.1:${server.port}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: 'ok', services: [skewed] });
    } finally {
      await server.close();
    }
  });

  it('has no /identity and no agent field without an identity', async () => {
    const server = await startHealthServer(source({ healthy: true, ready: true }), 0);
    const base = `http://127.0.0.1:${server.port}`;
    try {
      expect((await fetch(`${base}/identity`)).status).toBe(404);
      expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ status: 'ok', services: [] });
    } finally {
      await server.close();
    }
  });
});
