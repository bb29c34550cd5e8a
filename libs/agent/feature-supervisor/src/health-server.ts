import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ServiceStatus } from './supervisor';

/** What the health endpoints report. */
export interface HealthSource {
  healthy(): boolean;
  ready(): boolean;
  statuses(): ServiceStatus[];
}

/** Serves `/healthz` (every process running) and `/readyz` (every process ready) on loopback only. */
export async function startHealthServer(
  source: HealthSource,
  port: number,
  host = '127.0.0.1',
): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const ok =
      req.url === '/healthz'
        ? source.healthy()
        : req.url === '/readyz'
          ? source.ready()
          : undefined;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    if (ok === undefined) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}\n');
      return;
    }
    res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({ status: ok ? 'ok' : 'unavailable', services: source.statuses() }) + '\n',
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
