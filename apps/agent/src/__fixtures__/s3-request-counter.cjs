// A TCP proxy in front of the S3 emulator that logs every HTTP request it forwards with the time
// it arrived and its source address, one line each: `<epoch ms> <source> <method> <path>`.
// The chaos tier needs the requests a node sends while the emulator is SIGSTOPped, and a
// stopped moto_server logs nothing (its kernel backlog still accepts the connections), so the
// count is taken here, where requests arrive, for the healthy window and the outage alike.
//
// Usage: node s3-request-counter.cjs LISTEN_HOST LISTEN_PORT UNIX_PATH UPSTREAM_HOST UPSTREAM_PORT LOG
// Nodes connect on [LISTEN_HOST]:LISTEN_PORT; the test process (in another network namespace)
// connects through the Unix socket UNIX_PATH and is logged as source `test`.
'use strict';
const fs = require('node:fs');
const net = require('node:net');

const [listenHost, listenPort, unixPath, upstreamHost, upstreamPort, logPath] =
  process.argv.slice(2);
if (!logPath) {
  process.stderr.write(
    'usage: s3-request-counter.cjs HOST PORT UNIX UPSTREAM_HOST UPSTREAM_PORT LOG\n',
  );
  process.exit(2);
}
const log = fs.createWriteStream(logPath, { flags: 'a' });
// An HTTP/1.x request line at the start of what the client sends once the previous answer began.
const REQUEST_LINE = /^([A-Z]+) (\S+) HTTP\/1\.[01]\r\n/;

function relay(client, source) {
  const upstream = net.connect({ host: upstreamHost, port: Number(upstreamPort) });
  // The SDK sends one request per connection at a time (no pipelining): a chunk from the client
  // after the upstream has answered (or on a new connection) starts the next request.
  let expectRequest = true;
  client.on('data', (chunk) => {
    if (expectRequest) {
      const m = REQUEST_LINE.exec(chunk.subarray(0, 2048).toString('latin1'));
      if (m) {
        log.write(`${Date.now()} ${source} ${m[1]} ${m[2]}\n`);
        expectRequest = false;
      }
    }
    upstream.write(chunk);
  });
  upstream.on('data', (chunk) => {
    expectRequest = true;
    client.write(chunk);
  });
  const end = () => {
    client.destroy();
    upstream.destroy();
  };
  client.on('close', end);
  upstream.on('close', end);
  client.on('error', end);
  upstream.on('error', end);
}

const say = (msg) =>
  process.stdout.write(JSON.stringify({ msg, time: new Date().toISOString() }) + '\n');
const canonical = (address) => (address ?? 'unknown').replace(/^::ffff:/, '');
net
  .createServer((c) => relay(c, canonical(c.remoteAddress)))
  .listen(Number(listenPort), listenHost, () => say('listen tcp'));
try {
  fs.unlinkSync(unixPath);
} catch {
  // Not there.
}
net.createServer((c) => relay(c, 'test')).listen(unixPath, () => say('listen unix'));
