import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ServiceStatus } from './supervisor';

/** What the health endpoints report. */
export interface HealthSource {
  healthy(): boolean;
  ready(): boolean;
  statuses(): ServiceStatus[];
}

/**
 * Who the agent is, so a client can tell this agent from another one on the same address
 * (local `podmin setup` checks it is talking to the agent it started). Nothing secret.
 */
export interface AgentIdentity {
  cluster: string;
  nodegroup: string;
  /** The node root the services work under (PODMIN_NODE_ROOT). */
  nodeRoot: string;
  pid: number;
  version: string;
}

/** The `/identity` body and the `agent` field of `/healthz` and `/readyz`. */
export interface AgentIdentityBody extends AgentIdentity {
  name: 'podmin-agent';
}

/**
 * Serves `/healthz` (every process running), `/readyz` (every process ready) and, given an
 * identity, `/identity` on loopback only; the health bodies carry the identity as `agent`.
 */
export async function startHealthServer(
  source: HealthSource,
  port: number,
  host = '127.0.0.1',
  identity?: AgentIdentity,
): Promise<{ port: number; close(): Promise<void> }> {
  const agent: AgentIdentityBody | undefined =
    identity === undefined ? undefined : { name: 'podmin-agent', ...identity };
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    if (req.url === '/identity' && agent !== undefined) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(agent) + '\n');
      return;
    }
    const ok =
      req.url === '/healthz'
        ? source.healthy()
        : req.url === '/readyz'
          ? source.ready()
          : undefined;
    if (ok === undefined) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}\n');
      return;
    }
    res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        status: ok ? 'ok' : 'unavailable',
        services: source.statuses(),
        ...(agent === undefined ? {} : { agent }),
      }) + '\n',
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
