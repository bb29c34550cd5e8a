import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import tls from 'node:tls';
import type { coordination } from '@podmin/agent-contracts';
import { makeTempDir, waitFor, type TempDir } from '@podmin/testing';
import { PodminError } from '@podmin/util-errors';
import {
  HOUR_MS,
  NodeLeafSource as PkiNodeLeafSource,
  createClusterCa,
  issueNodeLeaf,
  systemClock,
  type ClusterCa,
  type IssuedCertificate,
  type NodeIdentity,
} from '@podmin/util-pki';
import { RecordingLog } from '../__fixtures__/recording-log';
import { servicePayload } from '../__fixtures__/snapshot-fixtures';
import { systemMonotonicClock } from '../adapters/system-clocks';
import type { NodeLeaf, NodeLeafSource } from '../coordinator.ports';
import { computeSnapshot } from '../snapshot/compute-snapshot';
import { dialCoordination } from './coordination-client';
import { startCoordinationServer, type CoordinationServer } from './coordination-server';
import {
  coordinationClientCredentials,
  coordinationServerCredentials,
  type CoordinationServerCredentials,
} from './credentials';
import { EndpointTable } from './endpoint-table';
import { LeaderHelloHandler } from './leader-hello-handler';

const OPENSSL = '/usr/bin/openssl';
/**
 * How s_client sees a refused client certificate: in TLS 1.3 the client finishes first, and
 * Node refuses after verifying by closing (it cannot send an alert for a chain it rejects).
 */
const CLOSED_BY_SERVER = /unexpected eof while reading|alert/i;
const CLUSTER = 'prod';
const PREFIX = 'fd00:1:2:3:4::/80';

let dir: TempDir;
let prodCa: ClusterCa;
let foreignCa: ClusterCa;
let log: RecordingLog;
let table: EndpointTable;
let creds: CoordinationServerCredentials;
let server: CoordinationServer;

const node = (nodeId: string, over: Partial<NodeIdentity> = {}): NodeIdentity => ({
  cluster: CLUSTER,
  nodegroup: 'workers',
  nodeId,
  ipv6: '::1',
  ...over,
});
const asLeaf = (issued: IssuedCertificate, ca: ClusterCa): NodeLeaf => ({
  certificatePem: issued.certificatePem,
  privateKeyPem: issued.privateKeyPem,
  caPem: ca.certificate.pem,
  notAfter: issued.certificate.notAfter,
});
/** util-pki's in-memory leaf source behind the coordinator's port. */
const leafSource = (source: PkiNodeLeafSource, ca: ClusterCa): NodeLeafSource => ({
  leaf: async () => asLeaf(await source.leaf(), ca),
});
const file = (name: string): string => path.join(dir.path, name);
/** Writes a leaf's certificate and key as `<name>.crt` / `<name>.key`. */
async function writeLeaf(name: string, issued: IssuedCertificate): Promise<void> {
  await writeFile(file(`${name}.crt`), issued.certificatePem);
  await writeFile(file(`${name}.key`), issued.privateKeyPem, { mode: 0o600 });
}
const request = (
  nodeId: string,
  endpoints: coordination.ReadyEndpoint[] = [],
): coordination.HelloRequest => ({
  nodeId,
  nodegroup: 'workers',
  prefix: PREFIX,
  endpoints,
  knownRevision: '',
  leaving: false,
  rollouts: [],
});
const web = (
  address: string,
  pod = `web-${address.split(':').pop()}`,
): coordination.ReadyEndpoint => ({
  namespace: 'default',
  pod,
  labels: { app: 'web' },
  address,
});
/** The refusals logged since `from`. */
const refusals = (from: number, msg = 'refuse coordination peer') =>
  log.lines.slice(from).filter((l) => l.msg === msg);
/** Waits (bounded) until a refusal is logged after `from`; handshake alerts land asynchronously. */
const refusalAfter = (from: number, msg?: string) =>
  waitFor(() => refusals(from, msg)[0], `a logged refusal after line ${from}`, 5000, 20);

async function helloWith(issued: IssuedCertificate, ca: ClusterCa, req: coordination.HelloRequest) {
  const client = dialCoordination(
    server.address,
    coordinationClientCredentials(asLeaf(issued, ca), CLUSTER),
  );
  try {
    return await client.hello(req, { timeoutMs: 5000 });
  } finally {
    client.close();
  }
}
async function failureOf(promise: Promise<unknown>): Promise<PodminError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof PodminError) return err;
    throw err;
  }
  throw new Error('the call succeeded');
}

/** Runs `openssl s_client` against the server and resolves with its exit code and output. */
function sClient(port: number, args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      OPENSSL,
      [
        's_client',
        '-connect',
        `[::1]:${port}`,
        '-CAfile',
        file('ca.pem'),
        '-verify_return_error',
        '-verify_ip',
        '::1',
        '-alpn',
        'h2',
        '-brief',
        ...args,
      ],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    // Keep stdin open briefly so a server alert sent after the client's Finished is read.
    setTimeout(() => child.stdin.end(), 500);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

/** openssl s_client to the test's server, presenting the leaf {@link writeLeaf} stored as `name`. */
const sClientAs = (name: string, version = '-tls1_3') =>
  sClient(server.port, [version, '-cert', file(`${name}.crt`), '-key', file(`${name}.key`)]);

/** Says Hello as `nodeId` with `leaf`; expects the handshake refused and returns what was logged. */
async function handshakeRefusalOf(leaf: IssuedCertificate, nodeId: string) {
  const from = log.lines.length;
  const err = await failureOf(helloWith(leaf, prodCa, request(nodeId)));
  expect(err.code).toBe('SERVICE_UNAVAILABLE');
  return (await refusalAfter(from)).fields;
}

beforeAll(async () => {
  dir = await makeTempDir('coordination-mtls');
  const now = systemClock.now();
  const dayAgo = new Date(now.getTime() - 24 * HOUR_MS);
  // Another CA of a cluster with the same name: only the chain tells them apart.
  [prodCa, foreignCa] = await Promise.all([
    createClusterCa(CLUSTER, dayAgo),
    createClusterCa(CLUSTER, dayAgo),
  ]);
  await writeFile(file('ca.pem'), prodCa.certificate.pem);
  creds = await coordinationServerCredentials(
    leafSource(new PkiNodeLeafSource(prodCa, node('leader'), systemClock), prodCa),
  );
});

// A fresh server (and log) per test, so a grpc-js reconnect of one test cannot log into another's.
beforeEach(async () => {
  log = new RecordingLog();
  table = new EndpointTable({ monotonic: systemMonotonicClock, log }, { allowUniqueLocal: true });
  const services = [servicePayload('default', 'web', { app: 'web' })];
  server = await startCoordinationServer({
    host: '::1',
    port: 0,
    credentials: creds,
    cluster: CLUSTER,
    log,
    handler: new LeaderHelloHandler({
      table,
      nodeId: 'leader',
      isLeader: () => true,
      knownLeader: () => ({ id: 'leader', addr: server.address }),
      snapshot: () =>
        computeSnapshot({ cluster: CLUSTER, services, nodes: table.nodes() }).snapshot,
    }),
  });
});

afterEach(async () => {
  await server.close();
});

afterAll(async () => {
  creds?.close();
  await dir?.cleanup();
});

describe('coordination over mutual TLS 1.3 on [::1]', () => {
  it("delivers a valid follower's Hello to the handler and returns its answer", async () => {
    const leaf = await issueNodeLeaf(prodCa, node('node-b'), systemClock.now());
    const answer = await helloWith(leaf, prodCa, request('node-b', [web('fd00:1:2:3:4::a')]));
    expect(answer.leaderId).toBe('leader');
    expect(answer.refused).toEqual([]);
    expect(answer.unchanged).toBe(false);
    expect(
      answer.snapshot?.services.map((s) => [s.name, s.ports[0]?.protocol, s.backends]),
    ).toEqual([['web', 'TCP', [{ address: 'fd00:1:2:3:4::a', nodeId: 'node-b' }]]]);
    const again = await helloWith(leaf, prodCa, {
      ...request('node-b', [web('fd00:1:2:3:4::a')]),
      knownRevision: answer.snapshot?.revision ?? '',
    });
    expect(again).toMatchObject({ snapshot: undefined, unchanged: true });
    expect(server.address).toMatch(/^\[::1\]:\d+$/);
  });

  it('(a) refuses a client certificate from another CA: grpc-js and openssl s_client', async () => {
    const intruder = await issueNodeLeaf(foreignCa, node('node-x'), systemClock.now());
    await writeLeaf('foreign', intruder);
    expect(await handshakeRefusalOf(intruder, 'node-x')).toMatchObject({
      stage: 'handshake',
      remoteAddress: '::1',
      reason: expect.stringMatching(/not issued by the cluster CA/),
    });
    expect(table.nodes().map((n) => n.nodeId)).not.toContain('node-x');

    const from = log.lines.length;
    const result = await sClientAs('foreign');
    expect(result.out).toMatch(CLOSED_BY_SERVER);
    expect(result.code).not.toBe(0);
    expect((await refusalAfter(from)).fields).toMatchObject({
      stage: 'handshake',
      remoteAddress: '::1',
    });
  });

  it("(b) answers PERMISSION_DENIED to the right CA with another cluster's SPIFFE URI", async () => {
    const misissued = await issueNodeLeaf(
      prodCa,
      node('node-s', { cluster: 'staging' }),
      systemClock.now(),
    );
    const from = log.lines.length;
    const err = await failureOf(helloWith(misissued, prodCa, request('node-s')));
    expect(err.code).toBe('ACCESS_DENIED');
    expect(err.message).toContain('outside trust domain prod.podmin.internal');
    expect(((err.cause as { code?: number }) ?? {}).code).toBe(7); // PERMISSION_DENIED
    expect(refusals(from)[0]?.fields).toMatchObject({
      stage: 'hello',
      remoteAddress: '::1',
      reason: expect.stringContaining(
        'spiffe://staging.podmin.internal/nodegroup/workers/node/node-s',
      ),
    });
  });

  it('answers PERMISSION_DENIED when the Hello names another node than the certificate', async () => {
    const leaf = await issueNodeLeaf(prodCa, node('node-c'), systemClock.now());
    const from = log.lines.length;
    const err = await failureOf(
      helloWith(leaf, prodCa, request('node-b', [web('fd00:1:2:3:4::bad')])),
    );
    expect(err.code).toBe('ACCESS_DENIED');
    expect(err.message).toMatch(/names node "node-b".*certificate names node node-c/);
    expect(refusals(from)[0]?.fields).toMatchObject({ stage: 'hello', node: 'node-c' });
    expect(table.nodes()).toEqual([]);
  });

  it('(c) refuses TLS 1.2 in the handshake while TLS 1.3 with a valid leaf succeeds (openssl s_client)', async () => {
    const leaf = await issueNodeLeaf(prodCa, node('node-o'), systemClock.now());
    await writeLeaf('valid', leaf);
    let from = log.lines.length;
    const old = await sClientAs('valid', '-tls1_2');
    expect(old.code).not.toBe(0);
    expect(old.out).toMatch(/protocol version|alert|no protocols available/i);
    expect((await refusalAfter(from)).fields).toMatchObject({
      stage: 'handshake',
      remoteAddress: '::1',
      reason: expect.stringMatching(/protocol/i),
    });

    from = log.lines.length;
    const current = await sClientAs('valid');
    expect(current.out).toContain('Protocol version: TLSv1.3');
    expect(current.out).toContain('Verification: OK');
    expect(current.out).not.toMatch(CLOSED_BY_SERVER);
    expect(current.code).toBe(0);
    expect(refusals(from)).toEqual([]);
  });

  it('refuses a client without a certificate in the handshake', async () => {
    const from = log.lines.length;
    const result = await sClient(server.port, ['-tls1_3']);
    expect(result.code).not.toBe(0);
    expect(result.out).toMatch(CLOSED_BY_SERVER);
    expect((await refusalAfter(from)).fields).toMatchObject({
      stage: 'handshake',
      remoteAddress: '::1',
      reason: expect.stringMatching(/no client certificate/),
    });
  });

  it('(d) refuses an expired leaf in the handshake', async () => {
    const threeHoursAgo = new Date(systemClock.now().getTime() - 3 * HOUR_MS);
    const expired = await issueNodeLeaf(prodCa, node('node-e'), threeHoursAgo, HOUR_MS);
    await writeLeaf('expired', expired);
    expect(await handshakeRefusalOf(expired, 'node-e')).toMatchObject({
      stage: 'handshake',
      reason: expect.stringMatching(/client certificate has expired/),
    });
    const from = log.lines.length;
    const result = await sClientAs('expired');
    expect(result.code).not.toBe(0);
    expect(result.out).toMatch(CLOSED_BY_SERVER);
    expect((await refusalAfter(from)).fields.reason).toMatch(/expired/i);
    expect(table.nodes().map((n) => n.nodeId)).not.toContain('node-e');
  });

  it("(e) refuses an endpoint outside the reporting node's /80 and keeps the ones inside", async () => {
    const leaf = await issueNodeLeaf(prodCa, node('node-d'), systemClock.now());
    const from = log.lines.length;
    const answer = await helloWith(
      leaf,
      prodCa,
      request('node-d', [
        web('fd00:1:2:3:4::d1'),
        web('fd00:1:2:3:5::66'),
        web('fd00:1:2:3:4::d2'),
      ]),
    );
    expect(answer.refused).toEqual([{ address: 'fd00:1:2:3:5::66', reason: 'outside-prefix' }]);
    expect(refusals(from, 'refuse endpoint').map((l) => l.fields)).toEqual([
      { node: 'node-d', address: 'fd00:1:2:3:5::66', reason: 'outside-prefix', prefix: PREFIX },
    ]);
    expect(
      table
        .nodes()
        .find((n) => n.nodeId === 'node-d')
        ?.endpoints.map((e) => e.address),
    ).toEqual(['fd00:1:2:3:4::d1', 'fd00:1:2:3:4::d2']);
    const backends = answer.snapshot?.services[0]?.backends.map((b) => b.address) ?? [];
    expect(backends).toEqual(expect.arrayContaining(['fd00:1:2:3:4::d1', 'fd00:1:2:3:4::d2']));
    expect(backends).not.toContain('fd00:1:2:3:5::66');
  });

  it('the client refuses a server whose certificate does not carry the dialled address', async () => {
    const elsewhere = await coordinationServerCredentials(
      leafSource(
        new PkiNodeLeafSource(prodCa, node('leader-2', { ipv6: 'fd00::99' }), systemClock),
        prodCa,
      ),
    );
    const other = await startCoordinationServer({
      host: '::1',
      port: 0,
      credentials: elsewhere,
      cluster: CLUSTER,
      log: new RecordingLog(),
      handler: { hello: () => Promise.reject(new Error('must not be reached')) },
    });
    try {
      const leaf = await issueNodeLeaf(prodCa, node('node-b'), systemClock.now());
      const client = dialCoordination(
        other.address,
        coordinationClientCredentials(asLeaf(leaf, prodCa), CLUSTER),
      );
      const err = await failureOf(client.hello(request('node-b'), { timeoutMs: 5000 }));
      client.close();
      expect(err.code).toBe('SERVICE_UNAVAILABLE');
      expect(err.message).toMatch(/do not include the dialled address ::1/);
    } finally {
      await other.close();
      elsewhere.close();
    }
  });

  it('renews the leaf in memory: a new connection sees the new serial, the server never restarts', async () => {
    const renewLog = new RecordingLog();
    // Four-second leaves renewed by the source in their last two seconds; ours asks at 2/3.
    const source = new PkiNodeLeafSource(prodCa, node('leader-r'), systemClock, 4000, 2000);
    const renewing = await coordinationServerCredentials(leafSource(source, prodCa), {
      log: renewLog,
      retryMs: 200,
    });
    const renewed = await startCoordinationServer({
      host: '::1',
      port: 0,
      credentials: renewing,
      cluster: CLUSTER,
      log: renewLog,
      handler: new LeaderHelloHandler({
        table: new EndpointTable({ monotonic: systemMonotonicClock }, { allowUniqueLocal: true }),
        nodeId: 'leader-r',
        isLeader: () => true,
        knownLeader: () => undefined,
        snapshot: () => undefined,
      }),
    });
    try {
      const leaf = await issueNodeLeaf(prodCa, node('node-b'), systemClock.now());
      const first = await servedSerial(renewed.port, leaf);
      await waitFor(
        () => renewLog.lines.find((l) => l.msg === 'renew coordination leaf'),
        'the leaf renewal',
        10_000,
        50,
      );
      const second = await servedSerial(renewed.port, leaf);
      expect(second).not.toBe(first);
      expect(second.toLowerCase()).toBe(
        (await source.leaf()).certificate.serialNumber.toLowerCase().replace(/^0+/, ''),
      );
      const client = dialCoordination(
        renewed.address,
        coordinationClientCredentials(asLeaf(leaf, prodCa), CLUSTER),
      );
      await expect(client.hello(request('node-b'), { timeoutMs: 5000 })).resolves.toMatchObject({
        leaderId: 'leader-r',
      });
      client.close();
    } finally {
      await renewed.close();
      renewing.close();
    }
  });
});

/** The serial of the certificate the server presents to a new TLS connection. */
function servedSerial(port: number, leaf: IssuedCertificate): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({
      host: '::1',
      port,
      minVersion: 'TLSv1.3',
      cert: leaf.certificatePem,
      key: leaf.privateKeyPem,
      ca: prodCa.certificate.pem,
      ALPNProtocols: ['h2'],
      checkServerIdentity: () => undefined,
    });
    socket.once('secureConnect', () => {
      const serial = socket.getPeerCertificate().serialNumber.toLowerCase().replace(/^0+/, '');
      socket.destroy();
      resolve(serial);
    });
    socket.once('error', reject);
  });
}
