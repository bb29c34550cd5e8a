import { createClusterCa, issueNodeLeaf } from './cluster-ca';
import { hasPkiReason } from './errors';
import {
  checkSpiffePeer,
  isNodePath,
  mutualTlsClientOptions,
  mutualTlsServerOptions,
} from './mtls';
import { issueWorkloadLeaf } from './workload-leaf';
import { workloadIssuer } from './__fixtures__/workload-issuer';

const NOW = new Date('2030-01-01T00:00:00Z');
const node = { cluster: 'prod', nodegroup: 'workers', nodeId: 'i-1', ipv6: '2001:db8::1' };

describe('mutual TLS helpers', () => {
  it('builds TLS 1.3-only mutual-auth options', async () => {
    const ca = await createClusterCa('prod', NOW);
    const leaf = await issueNodeLeaf(ca, node, NOW);
    const material = {
      certificatePem: leaf.certificatePem,
      privateKeyPem: leaf.privateKeyPem,
      caPem: ca.certificate.pem,
    };
    expect(mutualTlsServerOptions(material)).toMatchObject({
      minVersion: 'TLSv1.3',
      maxVersion: 'TLSv1.3',
      requestCert: true,
      rejectUnauthorized: true,
      ca: ca.certificate.pem,
    });
    const client = mutualTlsClientOptions(material, { cluster: 'prod' });
    expect(client).toMatchObject({
      minVersion: 'TLSv1.3',
      maxVersion: 'TLSv1.3',
      rejectUnauthorized: true,
    });
    expect(typeof client.checkServerIdentity).toBe('function');
  });

  it('authorizes by the SPIFFE URI SAN of the right trust domain, never by CN', async () => {
    const ca = await createClusterCa('prod', NOW);
    const ours = await issueNodeLeaf(ca, node, NOW);
    const foreign = await issueNodeLeaf(ca, { ...node, cluster: 'staging' }, NOW);
    expect(
      checkSpiffePeer(ours.certificate.der, { cluster: 'prod', allowPath: isNodePath }).segments,
    ).toEqual(['nodegroup', 'workers', 'node', 'i-1']);
    expect(() => checkSpiffePeer(foreign.certificate.der, { cluster: 'prod' })).toThrow(
      /outside trust domain prod.podmin.internal/,
    );
    expect(() => checkSpiffePeer(undefined, { cluster: 'prod' })).toThrow(/no peer certificate/);
    const workload = await issueWorkloadLeaf(
      await workloadIssuer(3, NOW),
      { cluster: 'prod', namespace: 'default', pod: 'i-1' },
      NOW,
    );
    try {
      checkSpiffePeer(workload.certificatePem, { cluster: 'prod', allowPath: isNodePath });
      throw new Error('accepted');
    } catch (err) {
      expect(hasPkiReason(err, 'PEER_REJECTED')).toBe(true);
    }
  });
});
