import fs from 'node:fs';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { serviceVip } from '@podmin/util-desired-state';
import { describeUnless, which } from '@podmin/testing';
import { dig } from './__fixtures__/dig';
import { buildUdpWorker } from './__fixtures__/udp-worker-bundle';
import { DnsServer, type DnsUdpPath } from './dns-server';
import { DnsZone } from './dns-zone';

/** The slowloris measured against agent-dns: this many idle TCP connections at once. */
const FLOOD_CONNECTIONS = 2_000;
/** Descriptors left for jest, the UDP worker, dig and the server's own sockets. */
const FD_MARGIN = 256;
/** Connections opened at once: below the listen backlog (511), so no SYN waits for a retry. */
const CONNECT_BATCH = 250;

const zone = DnsZone.build({
  cluster: 'podmin',
  generation: 1,
  services: [{ namespace: 'default', name: 'web' }],
});
const WEB = 'web.default.svc.cluster.local';
const WEB_ANSWER = `${WEB}. 5 IN AAAA ${serviceVip('podmin', 'default', 'web')}`;

/** The soft RLIMIT_NOFILE of this process (Node has no getrlimit; Linux shows it in /proc). */
function openFilesLimit(): number {
  try {
    const line = fs
      .readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = line?.split(/\s{2,}/)[1];
    return soft === undefined || soft === 'unlimited' ? Infinity : Number(soft);
  } catch {
    return 1024;
  }
}

async function until(condition: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 10));
  }
  return true;
}

/** Opens `count` TCP connections that never send a byte; resolves once each has connected. */
async function openIdle(port: number, count: number, into: net.Socket[]): Promise<void> {
  for (let opened = 0; opened < count; opened += CONNECT_BATCH) {
    const batch = Array.from({ length: Math.min(CONNECT_BATCH, count - opened) }, () => {
      const socket = net.connect(port, '127.0.0.1');
      // The server may close it (that is the point); a reset is not this test's failure.
      socket.on('error', () => undefined);
      into.push(socket);
      return new Promise<void>((resolve, reject) => {
        socket.once('connect', () => resolve());
        socket.once('error', reject);
      });
    });
    await Promise.all(batch);
  }
}

async function timed<T>(run: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const start = performance.now();
  const value = await run();
  return { value, ms: performance.now() - start };
}

// Each connection is two descriptors here: the client's and the server's end.
const connections = Math.min(FLOOD_CONNECTIONS, Math.floor((openFilesLimit() - FD_MARGIN) / 2));

const unusable =
  which('dig') === undefined
    ? 'dig is not installed (run tools/setup/apt-deps.sh)'
    : connections < 1
      ? `open files limit ${openFilesLimit()} is too low`
      : undefined;

describeUnless(unusable, 'dns-tcp-flood')('DnsServer with real dig', () => {
  let worker: { file: string; remove: () => void };
  beforeAll(async () => {
    worker = await buildUdpWorker();
  }, 20_000);
  afterAll(() => worker.remove());

  const UDP_PATHS: { path: DnsUdpPath['path']; workerFile: () => string | null }[] = [
    { path: 'recvmmsg-worker', workerFile: () => worker.file },
    { path: 'dgram', workerFile: () => null },
  ];

  describe.each(UDP_PATHS)('DnsServer under a TCP flood, UDP by $path', ({ path, workerFile }) => {
    it(`answers TCP and UDP while ${FLOOD_CONNECTIONS} idle TCP connections are open`, async () => {
      if (connections < FLOOD_CONNECTIONS) {
        process.stderr.write(
          `dns-tcp-flood: open files limit ${openFilesLimit()}: opening ${connections} connections, not ${FLOOD_CONNECTIONS}\n`,
        );
      }
      // The defaults: the limits and timeouts agent-dns runs with.
      const server = new DnsServer(zone, { port: 0, udpWorkerFile: workerFile() });
      const { port } = await server.listen();
      const idle: net.Socket[] = [];
      try {
        expect(server.udpPath().path).toBe(path);
        const flood = await timed(() => openIdle(port, connections, idle));
        // Every connection has reached the server's accept handler, kept or not.
        const settled = await until(() => {
          const c = server.counters();
          return c.tcpAccepted + c.tcpRefused >= connections;
        }, 10_000);
        expect(settled).toBe(true);
        // The client holds every one open; the server has closed those it evicted.
        const settledCounters = server.counters();
        const heldByServer =
          settledCounters.tcpAccepted - settledCounters.tcpEvicted - settledCounters.tcpIdleClosed;

        const tcp = await timed(() => dig(port, ['+tcp', WEB, 'AAAA']));
        const udp = await timed(() => dig(port, [WEB, 'AAAA']));
        const { tcpAccepted, tcpRefused, tcpEvicted, tcpIdleClosed } = server.counters();
        process.stderr.write(
          `dns-tcp-flood (UDP by ${path}): ${connections} idle TCP connections opened in ` +
            `${flood.ms.toFixed(0)} ms (${heldByServer} kept by the server); ` +
            `dig +tcp ${tcp.ms.toFixed(1)} ms (${tcp.value.status ?? 'no answer'}), ` +
            `dig udp ${udp.ms.toFixed(1)} ms (${udp.value.status ?? 'no answer'}); ` +
            `${JSON.stringify({ tcpAccepted, tcpRefused, tcpEvicted, tcpIdleClosed })}\n`,
        );
        expect(tcp.value.status).toBe('NOERROR');
        expect(tcp.value.answer).toEqual([WEB_ANSWER]);
        expect(udp.value.status).toBe('NOERROR');
        expect(udp.value.answer).toEqual([WEB_ANSWER]);
      } finally {
        for (const socket of idle) socket.destroy();
        await server.close();
      }
    }, 30_000);
  });
});
