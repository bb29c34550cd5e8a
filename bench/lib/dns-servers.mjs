// The DNS bench's servers' files: the zone NSD and CoreDNS serve, their configurations, and the
// stand-in coordinator's program (bench/dns.mjs describes each).
import fs from 'node:fs';
import path from 'node:path';
import { ZONE } from './dns-mixes.mjs';

/** Writes the zone file of `services` (an AAAA each, at `vipOf(service)`); returns its path. */
export function writeZoneFile(dir, services, vipOf) {
  const zoneFile = path.join(dir, `${ZONE}.zone`);
  fs.writeFileSync(
    zoneFile,
    [
      `$ORIGIN ${ZONE}.`,
      '$TTL 5',
      `@ IN SOA ns.${ZONE}. hostmaster.${ZONE}. 1 3600 600 86400 5`,
      `@ IN NS ns.${ZONE}.`,
      ...services.map((s) => `${s.name}.${s.namespace} IN AAAA ${vipOf(s)}`),
      '',
    ].join('\n'),
  );
  return zoneFile;
}

/** Writes NSD's configuration: one server process on 127.0.0.1:`port`, no rate limiting. */
export function writeNsdConf(dir, port, zoneFile) {
  const nsdConf = path.join(dir, 'nsd.conf');
  fs.writeFileSync(
    nsdConf,
    `server:
  ip-address: 127.0.0.1
  port: ${port}
  server-count: 1
  do-ip6: no
  username: ""
  chroot: ""
  zonesdir: "${dir}"
  database: ""
  zonelistfile: "${dir}/zone.list"
  xfrdfile: "${dir}/xfrd.state"
  xfrdir: "${dir}"
  pidfile: "${dir}/nsd.pid"
  logfile: "${dir}/nsd.log"
  verbosity: 0
  hide-version: yes
  # Response rate limiting (Debian builds it in, 200 a second per source) would drop replies.
  rrl-ratelimit: 0
  rrl-whitelist-ratelimit: 0
remote-control:
  control-enable: no
zone:
  name: ${ZONE}
  zonefile: ${zoneFile}
`,
  );
  return nsdConf;
}

/** Writes CoreDNS's Corefile: the file plugin alone, on 127.0.0.1:`port`. */
export function writeCorefile(dir, port, zoneFile) {
  const corefile = path.join(dir, 'Corefile');
  fs.writeFileSync(corefile, `${ZONE}:${port} {\n    bind 127.0.0.1\n    file ${zoneFile}\n}\n`);
  return corefile;
}

/**
 * Writes the stand-in coordinator's program to `file`: it serves the identities of `services` on
 * `socket` with `libFile`'s TestCoordinator; SIGUSR2 toggles a recompute of the first
 * `recomputeServices` every second (the leader's work); at SIGTERM it prints the recompute times.
 */
export function writeCoordinatorProgram(
  file,
  { libFile, services, cluster, recomputeServices, socket },
) {
  fs.writeFileSync(
    file,
    `const lib = require(${JSON.stringify(libFile)});
const services = ${JSON.stringify(services)};
const NODES = 100;
const payloads = (list) => list.map((s) => ({ namespace: s.namespace, name: s.name, object: {
  apiVersion: 'v1', kind: 'Service', metadata: { name: s.name, namespace: s.namespace },
  spec: { selector: { app: s.name }, ports: [{ port: 443, protocol: 'TCP', targetPort: 8443 }] } } }));
const recomputed = payloads(services.slice(0, ${recomputeServices}));
let generation = 0;
const recomputeMs = [];
function compute() {
  generation++;
  const absent = generation % NODES;
  const nodes = Array.from({ length: NODES }, (_, n) => ({
    nodeId: 'node-' + n,
    prefix: '2600:1f14:abc:1200:' + (n + 1).toString(16) + '::/80',
    endpoints: n === absent ? [] : recomputed.flatMap((s, i) => [0, 1, 2]
      .filter((b) => (i * 3 + b) % NODES === n)
      .map(() => ({ namespace: s.namespace, labels: { app: s.name, 'pod-template-hash': 'abc123' },
        address: '2600:1f14:abc:1200:' + (n + 1).toString(16) + '::' + (i + 1).toString(16) }))),
  }));
  const t0 = performance.now();
  const { snapshot } = lib.computeSnapshot({ cluster: ${JSON.stringify(cluster)}, services: recomputed, nodes, generation });
  leader.publish(snapshot, lib.ViewSource.LEADER);
  recomputeMs.push(performance.now() - t0);
}
// agent-dns asks WatchServices for identities only: the view hub's answer for all Services.
const hub = new lib.ServicesViewHub();
hub.publish(lib.computeSnapshot({ cluster: ${JSON.stringify(cluster)}, services: payloads(services), nodes: [], generation: 1 }).snapshot, lib.ViewSource.LEADER);
const leader = new lib.ServicesViewHub();
lib.TestCoordinator.start(${JSON.stringify(socket)}).then((server) => {
  server.setView(hub.current(true).snapshot);
  let timer;
  process.on('SIGUSR2', () => {
    if (timer) { clearInterval(timer); timer = undefined; return; }
    timer = setInterval(compute, 1000);
  });
  process.on('SIGTERM', () => {
    process.stdout.write(JSON.stringify({ generation, recomputeMs }) + '\\n');
    server.stop();
    process.exit(0);
  });
  process.stdout.write('ready\\n');
});
`,
  );
}
