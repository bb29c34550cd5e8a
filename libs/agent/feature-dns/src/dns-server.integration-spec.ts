import dgram from 'node:dgram';
import net from 'node:net';
import * as dnsPacket from 'dns-packet';
import type { Answer, RecordType } from 'dns-packet';
import { serviceVip } from '@podmin/util-desired-state';
import { describeIf, which } from '@podmin/testing';
import { dig } from './__fixtures__/dig';
import { optRecord } from './__fixtures__/opt-record';
import { testZone, WEB_VIP } from './__fixtures__/test-zone';
import { buildUdpWorker } from './__fixtures__/udp-worker-bundle';
import { DnsServer, type DnsUdpPath } from './dns-server';
import { encodeReply } from './dns-reply-encoding';
import { DnsZone } from './dns-zone';

const zone = testZone();
const SOA_LINE =
  'svc.cluster.local. 5 IN SOA ns.svc.cluster.local. hostmaster.svc.cluster.local. 42 3600 600 86400 5';

function query(name: string, type: 'AAAA' | 'A' = 'AAAA', id = 1): Buffer {
  return dnsPacket.encode({ type: 'query', id, questions: [{ name, type }] });
}

function framed(packet: Buffer): Buffer {
  const out = Buffer.alloc(2 + packet.length);
  out.writeUInt16BE(packet.length, 0);
  packet.copy(out, 2);
  return out;
}

async function until(condition: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 5));
  }
  return true;
}

// The UDP fast path's worker runs a bundle, built once for the file.
let worker: { file: string; remove: () => void };
beforeAll(async () => {
  worker = await buildUdpWorker();
}, 60_000);
afterAll(() => worker.remove());

/** Both UDP listeners; each must give the same bytes for every packet. */
const UDP_PATHS: { path: DnsUdpPath['path']; workerFile: () => string | null }[] = [
  { path: 'dgram', workerFile: () => null },
  { path: 'recvmmsg-worker', workerFile: () => worker.file },
];

describeIf(
  which('dig') !== undefined,
  'integration:dns',
  'dig is not installed (run tools/setup/apt-deps.sh)',
).each(UDP_PATHS)('DnsServer with real dig, UDP by $path', ({ path, workerFile }) => {
  let server: DnsServer;
  let port: number;

  beforeAll(async () => {
    server = new DnsServer(zone, { port: 0, udpWorkerFile: workerFile() });
    port = (await server.listen()).port;
  });
  afterAll(() => server.close());

  it(`serves UDP by ${path}`, () => {
    expect(server.udpPath().path).toBe(path);
  });

  it('answers AAAA with the VIP, TTL 5, authoritatively', async () => {
    const r = await dig(port, ['web.default.svc.cluster.local', 'AAAA']);
    expect(r.status).toBe('NOERROR');
    expect(r.flags).toContain('aa');
    expect(r.answer).toEqual([`web.default.svc.cluster.local. 5 IN AAAA ${WEB_VIP}`]);
  });

  it('answers ANY with the AAAA content', async () => {
    const r = await dig(port, ['database.product.svc.cluster.local', 'ANY']);
    expect(r.status).toBe('NOERROR');
    expect(r.answer).toEqual([
      `database.product.svc.cluster.local. 5 IN AAAA ${serviceVip('podmin', 'product', 'database')}`,
    ]);
  });

  it('gives NODATA with the SOA for A on a Service', async () => {
    const r = await dig(port, ['web.default.svc.cluster.local', 'A']);
    expect(r.status).toBe('NOERROR');
    expect(r.answer).toEqual([]);
    expect(r.authority).toEqual([SOA_LINE]);
  });

  it('gives NXDOMAIN with the SOA (TTL 5, minimum 5) for an unknown name', async () => {
    const r = await dig(port, ['nope.default.svc.cluster.local', 'AAAA']);
    expect(r.status).toBe('NXDOMAIN');
    expect(r.flags).toContain('aa');
    expect(r.authority).toEqual([SOA_LINE]);
  });

  it('gives NODATA for a namespace that has a Service (an empty non-terminal)', async () => {
    const r = await dig(port, ['product.svc.cluster.local', 'AAAA']);
    expect(r.status).toBe('NOERROR');
    expect(r.authority).toEqual([SOA_LINE]);
  });

  it('refuses names outside the zone and answers `. NS` (REFUSED, never silence)', async () => {
    expect((await dig(port, ['example.com', 'AAAA'])).status).toBe('REFUSED');
    const root = await dig(port, ['.', 'NS']);
    expect(root.status).toBe('REFUSED');
    expect(root.flags).not.toContain('aa');
  });

  it('answers the apex SOA and NS', async () => {
    expect((await dig(port, ['svc.cluster.local', 'SOA'])).answer).toEqual([SOA_LINE]);
    expect((await dig(port, ['svc.cluster.local', 'NS'])).answer).toEqual([
      'svc.cluster.local. 5 IN NS ns.svc.cluster.local.',
    ]);
  });

  it('matches mixed case and echoes the question as asked (dig checks it)', async () => {
    const r = await dig(port, ['WeB.DeFaUlT.SvC.cluster.LOCAL', 'AAAA']);
    expect(r.status).toBe('NOERROR');
    expect(r.answer).toEqual([`web.default.svc.cluster.local. 5 IN AAAA ${WEB_VIP}`]);
    expect(r.stdout).toContain(';WeB.DeFaUlT.SvC.cluster.LOCAL.');
    expect(r.stdout).not.toMatch(/mismatch/i);
  });

  it('speaks EDNS(0): its own UDP size, no OPT without EDNS, BADVERS above version 0', async () => {
    const edns = await dig(port, ['web.default.svc.cluster.local', 'AAAA', '+bufsize=4096']);
    expect(edns.ednsUdp).toBe(1232);
    expect(edns.answer).toHaveLength(1);
    const plain = await dig(port, ['web.default.svc.cluster.local', 'AAAA', '+noedns']);
    expect(plain.stdout).not.toContain('OPT PSEUDOSECTION');
    expect(plain.answer).toHaveLength(1);
    const v1 = await dig(port, ['web.default.svc.cluster.local', 'AAAA', '+edns=1', '+noednsneg']);
    expect(v1.status).toBe('BADVERS');
    expect(v1.answer).toEqual([]);
  });

  it('answers over TCP, several queries on one connection', async () => {
    const before = server.counters().tcpAccepted;
    const r = await dig(port, [
      '+tcp',
      '+keepopen',
      'web.default.svc.cluster.local',
      'AAAA',
      'database.product.svc.cluster.local',
      'AAAA',
    ]);
    expect(r.stdout.match(/status: NOERROR/g)).toHaveLength(2);
    expect(r.stdout).toContain(`IN\tAAAA\t${WEB_VIP}`);
    expect(server.counters().tcpAccepted - before).toBe(1);
  });

  it('swaps the zone without recreating its sockets', async () => {
    const next = DnsZone.build({
      cluster: 'podmin',
      generation: 43,
      services: [{ namespace: 'default', name: 'api' }],
    });
    const address = server.address();
    server.replaceZone(next);
    try {
      expect((await dig(port, ['web.default.svc.cluster.local', 'AAAA'])).status).toBe('NXDOMAIN');
      expect((await dig(port, ['api.default.svc.cluster.local', 'AAAA'])).answer).toEqual([
        `api.default.svc.cluster.local. 5 IN AAAA ${serviceVip('podmin', 'default', 'api')}`,
      ]);
      expect(server.address()).toEqual(address);
    } finally {
      server.replaceZone(zone);
    }
  });

  it('survives 100,000 random and mutated UDP packets, answering each as DnsZone.resolve does', async () => {
    const before = server.counters();
    const client = dgram.createSocket('udp4');
    // Each packet of a batch carries its own ID, so a reply names the packet it answers.
    const replies = new Map<number, Buffer>();
    let unexpected = 0;
    let mismatched = 0;
    let compared = 0;
    let expected = new Map<number, Buffer | undefined>();
    client.on('message', (reply: Buffer) => {
      const id = reply.length >= 2 ? reply.readUInt16BE(0) : -1;
      if (!expected.has(id) || replies.has(id)) unexpected++;
      else replies.set(id, reply);
    });
    await new Promise<void>((r) => client.bind(0, '127.0.0.1', () => r()));
    let seed = 12345;
    const random = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed / 2 ** 32;
    };
    const seeds = [
      query('web.default.svc.cluster.local'),
      dnsPacket.encode({
        type: 'query',
        id: 7,
        questions: [{ name: 'database.product.svc.cluster.local', type: 'ANY' as RecordType }],
        additionals: [optRecord()],
      }),
      query('.', 'A'),
    ];
    const total = 100_000;
    const batch = 200;
    try {
      for (let sent = 0; sent < total;) {
        const taken = server.counters().received;
        expected = new Map();
        replies.clear();
        for (let i = 0; i < batch; i++, sent++) {
          let packet: Buffer;
          const base = seeds[sent % seeds.length]!;
          switch (sent % 4) {
            case 0: // random bytes
              packet = Buffer.alloc(1 + Math.floor(random() * 600));
              for (let j = 0; j < packet.length; j++) packet[j] = Math.floor(random() * 256);
              break;
            case 1: // truncated
              packet = Buffer.from(base.subarray(0, 1 + Math.floor(random() * base.length)));
              break;
            default: // bit flips, sometimes with garbage appended
              packet = Buffer.from(base);
              for (let f = 1 + Math.floor(random() * 4); f > 0; f--) {
                const at = Math.floor(random() * packet.length);
                packet[at] = packet[at]! ^ (1 << Math.floor(random() * 8));
              }
              if (random() < 0.2) packet = Buffer.concat([packet, Buffer.alloc(7, 0xff)]);
          }
          const id = sent % 65536;
          if (packet.length >= 2) {
            packet.writeUInt16BE(id, 0);
            // What the dgram path sends is resolve's bytes, so this is the reference.
            const result = zone.resolve(packet, 'udp');
            expected.set(id, result.kind === 'reply' ? result.bytes : undefined);
          }
          client.send(packet, port, '127.0.0.1');
        }
        // Pace on what the server has taken in, so the kernel does not drop bursts.
        await until(() => server.counters().received >= taken + batch, 2_000);
        const answerable = [...expected.values()].filter((b) => b !== undefined).length;
        await until(() => replies.size >= answerable, 2_000);
        for (const [id, reply] of replies) {
          compared++;
          if (!reply.equals(expected.get(id) ?? Buffer.alloc(0))) mismatched++;
        }
      }
      await until(() => server.counters().received >= before.received + total, 5_000);
    } finally {
      client.close();
    }
    const after = server.counters();
    expect(mismatched).toBe(0);
    expect(unexpected).toBe(0);
    // Random bytes and most mutations are dropped; about 20,400 of these packets get replies.
    expect(compared).toBeGreaterThan(19_000);
    expect(after.received - before.received).toBeGreaterThanOrEqual(total * 0.99);
    expect(after.malformed - before.malformed).toBeGreaterThan(20_000);
    expect(after.failed).toBe(0);
    const r = await dig(port, ['web.default.svc.cluster.local', 'AAAA']);
    expect(r.answer).toEqual([`web.default.svc.cluster.local. 5 IN AAAA ${WEB_VIP}`]);
    expect((await dig(port, ['+tcp', 'web.default.svc.cluster.local', 'AAAA'])).status).toBe(
      'NOERROR',
    );
  }, 300_000);
});

describe('DnsServer truncation with real dig', () => {
  // No answer of the real zone exceeds 512 bytes (one AAAA per name), so an answerer with 40
  // AAAA records per reply shows dig's UDP → TC → TCP retry against the real listeners.
  const many: Answer[] = Array.from({ length: 40 }, (_, i) => ({
    type: 'AAAA',
    name: 'big.default.svc.cluster.local',
    ttl: 5,
    data: `fd50:6f64:6d69::${(i + 1).toString(16)}`,
  }));
  const answerer = {
    resolve(packet: Buffer, transport: 'udp' | 'tcp') {
      const result = zone.resolve(packet, transport);
      if (result.kind !== 'reply') return result;
      const question = result.bytes.subarray(12, 12 + (packet.length - 12));
      return encodeReply(
        {
          id: packet.readUInt16BE(0),
          flags: 0x0400,
          rcode: 'NOERROR',
          answers: many,
          authorities: [],
          edns: undefined,
        },
        question,
        transport === 'tcp' ? 65535 : 512,
      );
    },
  };
  let server: DnsServer;
  let port: number;

  beforeAll(async () => {
    server = new DnsServer(answerer, { port: 0, udpWorkerFile: worker.file });
    port = (await server.listen()).port;
  });
  afterAll(() => server.close());

  it('serves an answerer that is not a DnsZone by dgram', () => {
    expect(server.udpPath()).toEqual({ path: 'dgram', reason: 'the answerer is not a DnsZone' });
  });

  it('sets TC over UDP and gives the full answer over TCP', async () => {
    const udp = await dig(port, ['+noedns', '+ignore', 'big.default.svc.cluster.local', 'AAAA']);
    expect(udp.flags).toContain('tc');
    expect(udp.answer).toEqual([]);
    const retried = await dig(port, ['+noedns', 'big.default.svc.cluster.local', 'AAAA']);
    expect(retried.stdout).toContain('Truncated, retrying in TCP mode');
    expect(retried.answer).toHaveLength(40);
    expect(server.counters().truncated).toBeGreaterThanOrEqual(2);
  });
});

describe('DnsServer TCP limits', () => {
  it('serves pipelined and split frames in order on one connection', async () => {
    const server = new DnsServer(zone, { port: 0 });
    const { port } = await server.listen();
    try {
      const socket = net.connect(port, '127.0.0.1');
      const chunks: Buffer[] = [];
      socket.on('data', (c: Buffer) => chunks.push(c));
      await new Promise<void>((r) => socket.once('connect', () => r()));
      const a = framed(query('web.default.svc.cluster.local', 'AAAA', 1));
      const b = framed(query('nope.default.svc.cluster.local', 'AAAA', 2));
      const c = framed(query('web.default.svc.cluster.local', 'A', 3));
      socket.write(Buffer.concat([a, b, c.subarray(0, 5)]));
      await new Promise((r) => setTimeout(r, 20));
      socket.write(c.subarray(5));
      const received = () => Buffer.concat(chunks);
      const parse = () => {
        const out: { id: number; rcode: string; answers: number }[] = [];
        const all = received();
        for (let o = 0; o + 2 <= all.length;) {
          const len = all.readUInt16BE(o);
          if (o + 2 + len > all.length) break;
          const p = dnsPacket.decode(
            all.subarray(o + 2, o + 2 + len),
          ) as dnsPacket.DecodedPacket & {
            rcode: string;
          };
          out.push({ id: p.id ?? -1, rcode: p.rcode, answers: p.answers?.length ?? 0 });
          o += 2 + len;
        }
        return out;
      };
      expect(await until(() => parse().length === 3, 5_000)).toBe(true);
      expect(parse()).toEqual([
        { id: 1, rcode: 'NOERROR', answers: 1 },
        { id: 2, rcode: 'NXDOMAIN', answers: 0 },
        { id: 3, rcode: 'NOERROR', answers: 0 },
      ]);
      socket.destroy();
    } finally {
      await server.close();
    }
  });

  /** Opens a TCP connection to the server, noting when it closes. */
  function open(port: number, host = '127.0.0.1', localAddress?: string) {
    const s = net.connect({ port, host, localAddress });
    const closed = new Promise<number>((r) => s.once('close', () => r(Date.now())));
    const connected = new Promise<void>((r) => s.once('connect', () => r()));
    s.on('error', () => undefined);
    // Replies are discarded (`bytesRead` shows them): a paused socket would never see the close.
    s.resume();
    return { s, closed, connected };
  }

  it('closes a connection idle for the timeout since its accept or its last query', async () => {
    const server = new DnsServer(zone, { port: 0, tcpIdleTimeoutMs: 300 });
    const { port } = await server.listen();
    try {
      const start = Date.now();
      const silent = open(port);
      const asking = open(port);
      await Promise.all([silent.connected, asking.connected]);
      await new Promise((r) => setTimeout(r, 200));
      asking.s.write(framed(query('web.default.svc.cluster.local')));
      const silentClosed = await silent.closed;
      expect(silentClosed - start).toBeGreaterThanOrEqual(280);
      expect(silentClosed - start).toBeLessThan(1_000);
      const askingClosed = await asking.closed;
      expect(askingClosed - start).toBeGreaterThanOrEqual(480);
      expect(server.counters().tcpIdleClosed).toBe(2);
    } finally {
      await server.close();
    }
  });

  it('does not extend the timeout for bytes that never complete a query (slowloris)', async () => {
    const server = new DnsServer(zone, { port: 0, tcpIdleTimeoutMs: 300 });
    const { port } = await server.listen();
    try {
      const start = Date.now();
      const slow = open(port);
      await slow.connected;
      const bytes = framed(query('web.default.svc.cluster.local'));
      let at = 0;
      const trickle = setInterval(() => {
        if (!slow.s.destroyed && at < bytes.length - 1) slow.s.write(bytes.subarray(at, ++at));
      }, 50);
      try {
        const closed = await slow.closed;
        expect(closed - start).toBeLessThan(1_000);
        expect(at).toBeGreaterThan(3);
      } finally {
        clearInterval(trickle);
      }
    } finally {
      await server.close();
    }
  });

  it('over the total, closes the oldest idle connection to admit a new one', async () => {
    const server = new DnsServer(zone, { port: 0, maxTcpConnections: 2 });
    const { port } = await server.listen();
    try {
      const first = open(port);
      await first.connected;
      const second = open(port);
      await second.connected;
      expect(await until(() => server.counters().tcpAccepted === 2, 2_000)).toBe(true);
      // The first asks a query later than the second was opened: the second is now the oldest.
      first.s.write(framed(query('web.default.svc.cluster.local')));
      expect(await until(() => first.s.bytesRead > 0, 2_000)).toBe(true);
      const third = open(port);
      await third.connected;
      await second.closed;
      expect(server.counters()).toMatchObject({ tcpAccepted: 3, tcpEvicted: 1, tcpRefused: 0 });
      third.s.write(framed(query('web.default.svc.cluster.local')));
      expect(await until(() => third.s.bytesRead > 0, 2_000)).toBe(true);
      expect(first.s.destroyed).toBe(false);
      first.s.destroy();
      third.s.destroy();
    } finally {
      await server.close();
    }
  });

  it('over the per-source limit, closes that source’s oldest idle connection, not another’s', async () => {
    const server = new DnsServer(zone, { port: 0, maxTcpConnectionsPerSource: 2 });
    const { port } = await server.listen();
    try {
      const other = open(port, '127.0.0.1', '127.0.0.2');
      await other.connected;
      const a1 = open(port);
      await a1.connected;
      const a2 = open(port);
      await a2.connected;
      const a3 = open(port);
      await a3.connected;
      await a1.closed;
      expect(server.counters()).toMatchObject({ tcpAccepted: 4, tcpEvicted: 1 });
      expect(other.s.destroyed).toBe(false);
      expect(a2.s.destroyed).toBe(false);
      for (const c of [other, a2, a3]) c.s.destroy();
    } finally {
      await server.close();
    }
  });

  it('never closes a connection with a query in progress: refuses the new one instead', async () => {
    const server = new DnsServer(zone, { port: 0, maxTcpConnections: 1 });
    const { port } = await server.listen();
    try {
      const busy = open(port);
      await busy.connected;
      const bytes = framed(query('web.default.svc.cluster.local'));
      busy.s.write(bytes.subarray(0, 5));
      expect(await until(() => server.counters().tcpAccepted === 1, 2_000)).toBe(true);
      await new Promise((r) => setTimeout(r, 50));
      const late = open(port);
      await late.closed;
      expect(server.counters()).toMatchObject({ tcpRefused: 1, tcpEvicted: 0 });
      busy.s.write(bytes.subarray(5));
      expect(await until(() => busy.s.bytesRead > 0, 2_000)).toBe(true);
      // Its query answered, it is idle again and makes room.
      const next = open(port);
      await next.connected;
      await busy.closed;
      expect(server.counters()).toMatchObject({ tcpAccepted: 2, tcpEvicted: 1 });
      next.s.destroy();
    } finally {
      await server.close();
    }
  });

  it('refuses limits that are not positive integers, naming each', () => {
    expect(
      () => new DnsServer(zone, { port: 0, maxTcpConnections: 0, tcpIdleTimeoutMs: 1.5 }),
    ).toThrow(/tcpIdleTimeoutMs 1\.5.*maxTcpConnections 0/);
  });

  it('refuses to listen on a non-loopback address', () => {
    expect(() => new DnsServer(zone, { host: '0.0.0.0' })).toThrow(/not a loopback address/);
    expect(() => new DnsServer(zone, { host: '::' })).toThrow(/not a loopback address/);
    expect(() => new DnsServer(zone, { host: '::1', port: 0 })).not.toThrow();
  });
});
