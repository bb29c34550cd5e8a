// Opens COUNT idle TCP connections to HOST:PORT (a slowloris flood: connected, never a byte
// sent) and holds them until killed, printing JSON lines: `flood opened` once every attempt has
// settled, then `flood held` every second with how many are still open and how many the server
// closed. Run inside a node's network namespace by the chaos tier.
//
// Usage: node tcp-idle-flood.cjs HOST PORT COUNT
'use strict';
const net = require('node:net');

const [host, port, countText] = process.argv.slice(2);
const count = Number(countText);
if (!host || !Number.isInteger(count) || count <= 0) {
  process.stderr.write('usage: tcp-idle-flood.cjs HOST PORT COUNT\n');
  process.exit(2);
}
// Connects this many at once, so the flood does not overrun the listen backlog on its own.
const PARALLEL = 100;
let open = 0;
let failed = 0;
let closedByServer = 0;
let started = 0;
let settled = 0;

const report = (msg) =>
  process.stdout.write(
    JSON.stringify({ msg, time: new Date().toISOString(), open, failed, closedByServer }) + '\n',
  );

function next() {
  if (started >= count) return;
  started++;
  const socket = net.connect({ host, port: Number(port) });
  let connected = false;
  socket.setNoDelay(true);
  socket.on('connect', () => {
    connected = true;
    open++;
    settled++;
    if (settled === count) report('flood opened');
    next();
  });
  socket.on('error', () => undefined);
  socket.on('close', () => {
    if (connected) {
      open--;
      closedByServer++;
    } else {
      failed++;
      settled++;
      if (settled === count) report('flood opened');
      next();
    }
  });
}

for (let i = 0; i < Math.min(PARALLEL, count); i++) next();
setInterval(() => report('flood held'), 1000);
