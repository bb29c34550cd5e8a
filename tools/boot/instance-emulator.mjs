#!/usr/bin/env node
// The EC2 instance a boot test's user-data runs on, as one loopback HTTP server:
//   - IMDSv2: PUT /latest/api/token, then GET /latest/meta-data/<path> with that token only
//     (a GET without it is 401, as IMDS answers when IMDSv1 is disabled), serving the ENI facts
//     userdata/aws.sh reads and the instance role's credentials the SDKs fetch;
//   - the two EC2 Query API actions bootstrap calls (POST /, Action=...): DescribeNetworkInterfaces
//     and AssignIpv6Addresses. moto's EC2 has no delegated IPv6 prefixes (no Ipv6PrefixCount),
//     so the prefix part of the EC2 API is emulated here, with state, as EC2 keeps it: a second
//     describe after an assignment lists the assigned prefix.
//   node tools/boot/instance-emulator.mjs CONFIG.json   (prints `listening <port>` when ready)
// CONFIG: { "port": 0, "region", "instanceId", "role", "credentials": { accessKeyId,
// secretAccessKey }, "interfaces": [{ "mac", "device", "eniId", "ipv6s": [..], "prefixes": [..]
// }], "assignPrefix", "assignAddress", "log": "<file of requests>" }.
import fs from 'node:fs';
import http from 'node:http';
import { randomBytes } from 'node:crypto';

const config = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const tokens = new Set();
const log = (line) => {
  if (config.log) fs.appendFileSync(config.log, `${line}\n`);
};
const xml = (action, body) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<${action}Response xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>00000000-0000-0000-0000-000000000000</requestId>${body}</${action}Response>`;
const items = (values, wrap) => values.map((v) => `<item>${wrap(v)}</item>`).join('');

/** The meta-data tree, as IMDS lists it: a directory answers its children, one per line. */
function metadata() {
  const tree = {
    'instance-id': config.instanceId,
    placement: { region: config.region },
    mac: config.interfaces.find((i) => i.device === 0)?.mac ?? '',
    network: { interfaces: { macs: {} } },
    iam: { 'security-credentials': { [config.role]: credentialsDocument() } },
  };
  for (const eni of config.interfaces) {
    tree.network.interfaces.macs[eni.mac] = {
      'device-number': String(eni.device),
      'interface-id': eni.eniId,
      mac: eni.mac,
      ...(eni.ipv6s.length > 0 ? { ipv6s: eni.ipv6s.join('\n') } : {}),
      ...(eni.prefixes.length > 0 ? { 'ipv6-prefix': eni.prefixes.join('\n') } : {}),
    };
  }
  return tree;
}

function credentialsDocument() {
  const now = new Date();
  return JSON.stringify({
    Code: 'Success',
    LastUpdated: now.toISOString().replace(/\.\d+Z$/, 'Z'),
    Type: 'AWS-HMAC',
    AccessKeyId: config.credentials.accessKeyId,
    SecretAccessKey: config.credentials.secretAccessKey,
    Token: 'boot-test-session-token',
    Expiration: new Date(now.getTime() + 6 * 3600_000).toISOString().replace(/\.\d+Z$/, 'Z'),
  });
}

function serveMetadata(req, res, path) {
  let node = metadata();
  for (const part of path.split('/').filter((p) => p !== '')) {
    node = typeof node === 'object' && node !== null ? node[part] : undefined;
  }
  if (node === undefined) return res.writeHead(404).end('Not Found');
  if (typeof node === 'object') {
    return res.writeHead(200, { 'content-type': 'text/plain' }).end(
      Object.entries(node)
        .map(([k, v]) => (typeof v === 'object' ? `${k}/` : k))
        .join('\n'),
    );
  }
  return res.writeHead(200, { 'content-type': 'text/plain' }).end(node);
}

function ec2(res, form) {
  const action = form.get('Action');
  const eniId = form.get('NetworkInterfaceId.1') ?? form.get('NetworkInterfaceId');
  const eni = config.interfaces.find((i) => i.eniId === eniId);
  if (eni === undefined) {
    return res
      .writeHead(400, { 'content-type': 'text/xml' })
      .end(
        `<Response><Errors><Error><Code>InvalidNetworkInterfaceID.NotFound</Code><Message>The networkInterface ID '${eniId}' does not exist</Message></Error></Errors><RequestID>0</RequestID></Response>`,
      );
  }
  if (action === 'DescribeNetworkInterfaces') {
    return res
      .writeHead(200, { 'content-type': 'text/xml' })
      .end(
        xml(
          action,
          `<networkInterfaceSet><item><networkInterfaceId>${eni.eniId}</networkInterfaceId><macAddress>${eni.mac}</macAddress><ipv6AddressesSet>${items(
            eni.ipv6s,
            (a) => `<ipv6Address>${a}</ipv6Address>`,
          )}</ipv6AddressesSet><ipv6PrefixSet>${items(eni.prefixes, (p) => `<ipv6Prefix>${p}</ipv6Prefix>`)}</ipv6PrefixSet></item></networkInterfaceSet>`,
        ),
      );
  }
  if (action === 'AssignIpv6Addresses') {
    const assignedAddresses = [];
    const assignedPrefixes = [];
    if (form.get('Ipv6PrefixCount') === '1') {
      eni.prefixes.push(config.assignPrefix);
      assignedPrefixes.push(config.assignPrefix);
    } else if (form.get('Ipv6AddressCount') === '1') {
      eni.ipv6s.push(config.assignAddress);
      assignedAddresses.push(config.assignAddress);
    } else {
      return res
        .writeHead(400)
        .end(
          '<Response><Errors><Error><Code>InvalidParameterCombination</Code><Message>one address or one prefix</Message></Error></Errors></Response>',
        );
    }
    return res
      .writeHead(200, { 'content-type': 'text/xml' })
      .end(
        xml(
          action,
          `<networkInterfaceId>${eni.eniId}</networkInterfaceId><assignedIpv6Addresses>${items(assignedAddresses, (a) => a)}</assignedIpv6Addresses><assignedIpv6PrefixSet>${items(assignedPrefixes, (p) => p)}</assignedIpv6PrefixSet>`,
        ),
      );
  }
  return res.writeHead(400).end(`unsupported action ${action}`);
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const url = new URL(req.url ?? '/', 'http://instance');
    const body = Buffer.concat(chunks).toString('utf8');
    if (req.method === 'PUT' && url.pathname === '/latest/api/token') {
      log('imds PUT /latest/api/token');
      const token = randomBytes(16).toString('hex');
      tokens.add(token);
      return res.writeHead(200, { 'content-type': 'text/plain' }).end(token);
    }
    if (url.pathname.startsWith('/latest/meta-data/')) {
      const path = url.pathname.slice('/latest/meta-data/'.length);
      const token = req.headers['x-aws-ec2-metadata-token'];
      log(`imds GET ${path}${tokens.has(token) ? '' : ' (no token)'}`);
      if (!tokens.has(token)) return res.writeHead(401).end('Unauthorized');
      return serveMetadata(req, res, path);
    }
    if (req.method === 'POST' && url.pathname === '/') {
      const form = new URLSearchParams(body);
      log(
        `ec2 ${form.get('Action')} ${[...form.entries()]
          .filter(([k]) => k !== 'Action' && k !== 'Version')
          .map(([k, v]) => `${k}=${v}`)
          .join(' ')}`,
      );
      return ec2(res, form);
    }
    log(`unknown ${req.method} ${url.pathname}`);
    return res.writeHead(404).end('Not Found');
  });
});
server.listen(config.port ?? 0, '127.0.0.1', () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
