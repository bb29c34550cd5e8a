import tls from 'node:tls';
import type { AddressInfo } from 'node:net';
import { CLOCK_SKEW_MARGIN_MS, SECOND_MS, systemClock } from './clock';
import type { ClusterCa } from './cluster-ca';
import { createClusterCa, issueNodeLeaf } from './cluster-ca';
import type { IssuedCertificate } from './issue';
import type { MutualTlsMaterial, SpiffePeerPolicy } from './mtls';
import { isNodePath, mutualTlsClientOptions, mutualTlsServerOptions, verifyTlsPeer } from './mtls';

const policy: SpiffePeerPolicy = { cluster: 'prod', allowPath: isNodePath };
let prodCa: ClusterCa;
let otherCa: ClusterCa;

const material = (leaf: IssuedCertificate, ca: ClusterCa): MutualTlsMaterial => ({
  certificatePem: leaf.certificatePem,
  privateKeyPem: leaf.privateKeyPem,
  caPem: ca.certificate.pem,
});
const nodeLeaf = (
  ca: ClusterCa,
  cluster: string,
  nodeId: string,
  ipv6: string,
): Promise<IssuedCertificate> =>
  issueNodeLeaf(ca, { cluster, nodegroup: 'workers', nodeId, ipv6 }, systemClock.now());

beforeAll(async () => {
  const now = systemClock.now();
  [prodCa, otherCa] = await Promise.all([
    createClusterCa('prod', now),
    createClusterCa('staging', now),
  ]);
});

interface Outcome {
  client: string;
  server: string;
}

/** Runs one handshake on loopback and reports what each side saw (5 s bound). */
async function handshake(
  serverSide: MutualTlsMaterial,
  clientSide: MutualTlsMaterial,
): Promise<Outcome> {
  let serverSeen = 'nothing';
  const server = tls.createServer(mutualTlsServerOptions(serverSide), (socket) => {
    try {
      const id = verifyTlsPeer(socket, policy);
      serverSeen = `accepted ${id.uri} over ${socket.getProtocol()}`;
      socket.end('ok\n');
    } catch (err) {
      serverSeen = `rejected: ${(err as Error).message}`;
    }
  });
  server.on('tlsClientError', (err) => (serverSeen = `handshake failed: ${err.message}`));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  try {
    const client = await new Promise<string>((resolve) => {
      const socket = tls.connect({
        host: '127.0.0.1',
        port,
        ...mutualTlsClientOptions(clientSide, policy),
      });
      const timer = setTimeout(() => socket.destroy(new Error('timeout')), 5000);
      let data = '';
      socket.on('data', (d: Buffer) => (data += d.toString()));
      socket.on('end', () =>
        resolve(`received ${data.trim()} over ${String(socket.getProtocol())}`),
      );
      socket.on('error', (err) => resolve(`error: ${err.message}`));
      socket.on('close', () => clearTimeout(timer));
    });
    // The server's verdict may land a tick after the client gives up.
    for (let i = 0; i < 50 && serverSeen === 'nothing'; i++)
      await new Promise((r) => setTimeout(r, 10));
    return { client, server: serverSeen };
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

describe('node TLS 1.3 mutual authentication with SPIFFE peer checks', () => {
  it('accepts two nodes of the same cluster', async () => {
    const a = await nodeLeaf(prodCa, 'prod', 'node-a', '2001:db8::a');
    const b = await nodeLeaf(prodCa, 'prod', 'node-b', '2001:db8::b');
    const outcome = await handshake(material(a, prodCa), material(b, prodCa));
    expect(outcome.client).toBe('received ok over TLSv1.3');
    expect(outcome.server).toBe(
      'accepted spiffe://prod.podmin.internal/nodegroup/workers/node/node-b over TLSv1.3',
    );
  });

  it("rejects another cluster's leaf at the chain check", async () => {
    const a = await nodeLeaf(prodCa, 'prod', 'node-a', '2001:db8::a');
    const intruder = await nodeLeaf(otherCa, 'staging', 'node-x', '2001:db8::f');
    const outcome = await handshake(material(a, prodCa), material(intruder, prodCa));
    // In TLS 1.3 the client finishes first; the server's alert then closes the connection.
    expect(outcome.client).not.toContain('received ok');
    expect(outcome.server).toMatch(/^handshake failed: /);
  });

  it('rejects a chain-valid leaf whose SPIFFE ID names another trust domain', async () => {
    const a = await nodeLeaf(prodCa, 'prod', 'node-a', '2001:db8::a');
    const misissued = await nodeLeaf(prodCa, 'staging', 'node-x', '2001:db8::f');
    const asClient = await handshake(material(a, prodCa), material(misissued, prodCa));
    expect(asClient.server).toMatch(/rejected: .*outside trust domain prod\.podmin\.internal/);
    expect(asClient.client).not.toBe('received ok over TLSv1.3');
    const asServer = await handshake(material(misissued, prodCa), material(a, prodCa));
    expect(asServer.client).toMatch(/error: .*outside trust domain prod\.podmin\.internal/);
  });

  it('accepts leaves from an issuer whose clock runs 60 s ahead, as node TLS judges validity', async () => {
    // Node's TLS checks validity against this process's real clock: issuing "in the future"
    // makes this process the verifier whose clock is behind the issuer's.
    const ahead = async (
      ms: number,
    ): Promise<[IssuedCertificate, IssuedCertificate, ClusterCa]> => {
      const at = new Date(systemClock.now().getTime() + ms);
      const ca = await createClusterCa('prod', at);
      const issue = (nodeId: string, ipv6: string): Promise<IssuedCertificate> =>
        issueNodeLeaf(ca, { cluster: 'prod', nodegroup: 'workers', nodeId, ipv6 }, at);
      return [await issue('node-a', '2001:db8::a'), await issue('node-b', '2001:db8::b'), ca];
    };
    const [a, b, ca] = await ahead(60 * SECOND_MS);
    const outcome = await handshake(material(a, ca), material(b, ca));
    expect(outcome.client).toBe('received ok over TLSv1.3');
    expect(outcome.server).toMatch(/^accepted spiffe:\/\/prod\.podmin\.internal\//);
    // Further ahead than the margin, the same handshake is refused: the check can fail.
    const [c, d, far] = await ahead(CLOCK_SKEW_MARGIN_MS + 60 * SECOND_MS);
    const refused = await handshake(material(c, far), material(d, far));
    expect(refused.client).toMatch(/not yet valid/);
  });

  it('refuses TLS 1.2', async () => {
    const a = await nodeLeaf(prodCa, 'prod', 'node-a', '2001:db8::a');
    const b = await nodeLeaf(prodCa, 'prod', 'node-b', '2001:db8::b');
    const old = {
      ...mutualTlsClientOptions(material(b, prodCa), policy),
      minVersion: 'TLSv1.2',
      maxVersion: 'TLSv1.2',
    } as const;
    const server = tls.createServer(mutualTlsServerOptions(material(a, prodCa)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const result = await new Promise<string>((resolve) => {
        const socket = tls.connect({ host: '127.0.0.1', port, ...old }, () => resolve('connected'));
        socket.on('error', (err) => resolve(`error: ${err.message}`));
        setTimeout(() => socket.destroy(new Error('timeout')), 5000).unref();
      });
      expect(result).toMatch(/^error: .*(protocol version|alert)/i);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
