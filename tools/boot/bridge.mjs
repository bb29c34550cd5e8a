#!/usr/bin/env node
// Forwards connections between network namespaces through a Unix socket, which a filesystem
// path makes reachable from every namespace (loopback TCP is per namespace): the boot test's
// node namespace reaches the S3/SSM emulator on the host's loopback as
//   host:  node tools/boot/bridge.mjs unix:/tmp/x.sock tcp:127.0.0.1:4566
//   node:  node tools/boot/bridge.mjs tcp:127.0.0.1:4566 unix:/tmp/x.sock
// (listen on the first, connect to the second). Prints `listening` once it accepts.
import fs from 'node:fs';
import net from 'node:net';

const parse = (spec) => {
  if (spec.startsWith('unix:')) return { path: spec.slice(5) };
  const m = /^tcp:(.+):(\d+)$/.exec(spec);
  if (!m) throw new Error(`bridge: ${spec} is neither unix:PATH nor tcp:HOST:PORT`);
  return { host: m[1], port: Number(m[2]) };
};
const [from, to] = process.argv.slice(2).map(parse);
if (from.path) fs.rmSync(from.path, { force: true });
const server = net.createServer((inbound) => {
  const outbound = net.connect(to);
  inbound.pipe(outbound).pipe(inbound);
  const close = () => {
    inbound.destroy();
    outbound.destroy();
  };
  inbound.on('error', close);
  outbound.on('error', close);
});
server.listen(from, () => process.stdout.write('listening\n'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
