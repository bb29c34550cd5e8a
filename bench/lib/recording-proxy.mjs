// An HTTP proxy on loopback in front of the S3 emulator that records every request the CLI
// makes, so a bench can count requests and rounds of requests.
import http from 'node:http';
import { onCleanup } from './bench.mjs';

/**
 * Starts the proxy on a free loopback port, forwarding to `upstream` (closed at cleanup). Each
 * request is recorded as `{ what: 'METHOD /path', method, start, end }` (performance.now() ms;
 * `end` once its response was sent). With `latencyMs` every response is held back that long,
 * standing in for a real region's round trip. `take()` returns the requests since the last take.
 */
export async function startRecordingProxy(upstream, { latencyMs = 0 } = {}) {
  const target = new URL(upstream);
  let requests = [];
  const server = http.createServer((req, res) => {
    const record = {
      what: `${req.method} ${req.url.split('?')[0]}`,
      method: req.method,
      // The operation of an AWS JSON API request (e.g. `TrentService.Sign`), if it is one.
      target: req.headers['x-amz-target'],
      start: performance.now(),
      end: undefined,
    };
    requests.push(record);
    const fwd = http.request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (up) => {
        res.on('finish', () => (record.end = performance.now()));
        if (latencyMs === 0) {
          res.writeHead(up.statusCode, up.headers);
          up.pipe(res);
          return;
        }
        const chunks = [];
        up.on('data', (c) => chunks.push(c));
        up.on('end', () =>
          setTimeout(() => {
            res.writeHead(up.statusCode, up.headers);
            res.end(Buffer.concat(chunks));
          }, latencyMs),
        );
      },
    );
    fwd.on('error', () => res.destroy());
    req.pipe(fwd);
  });
  onCleanup(() => server.close());
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${server.address().port}`,
    take: () => {
      const taken = requests;
      requests = [];
      return taken;
    },
  };
}
