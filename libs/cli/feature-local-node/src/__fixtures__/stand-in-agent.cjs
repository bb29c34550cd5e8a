// Stands in for podmin-agent in local setup's tests: binds PODMIN_AGENT_HEALTH_ADDRESS as the
// agent does (so a taken address kills it with EADDRINUSE the same way) and answers /readyz
// with the identity the real agent reports.
'use strict';
const http = require('node:http');

const flag = (name) => process.argv[process.argv.indexOf(`--${name}`) + 1];
const address = process.env.PODMIN_AGENT_HEALTH_ADDRESS;
const at = address.lastIndexOf(':');
const agent = {
  name: 'podmin-agent',
  cluster: flag('cluster'),
  nodegroup: flag('nodegroup'),
  nodeRoot: process.env.PODMIN_NODE_ROOT,
  pid: process.pid,
  version: '0.0.0-stand-in',
};
http
  .createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ status: 'ok', services: [], agent }) + '\n');
  })
  .listen(Number(address.slice(at + 1)), address.slice(0, at));
process.on('SIGTERM', () => process.exit(0));
