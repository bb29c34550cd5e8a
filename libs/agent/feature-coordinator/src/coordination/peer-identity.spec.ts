import { X509Certificate } from 'node:crypto';
import {
  createClusterCa,
  createWorkloadCaCertificate,
  generateWorkloadCaSecretValue,
  issueNodeLeaf,
  issueWorkloadLeaf,
  parseWorkloadCaSecret,
  type ClusterCa,
} from '@podmin/util-pki';
import { canonicalIpv6, peerIdentity } from './peer-identity';
import { thrownPodminError } from '../__fixtures__/thrown';

const NOW = new Date('2026-12-01T10:00:00Z');
let ca: ClusterCa;

beforeAll(async () => {
  ca = await createClusterCa('prod', NOW);
});

const leaf = (
  over: { cluster?: string; nodegroup?: string; nodeId?: string; ipv6?: string } = {},
) =>
  issueNodeLeaf(
    ca,
    {
      cluster: 'prod',
      nodegroup: 'workers',
      nodeId: 'i-0abc',
      ipv6: 'FD00:0:0:0:0:0:0:1',
      ...over,
    },
    NOW,
  );

describe('peerIdentity', () => {
  it('reads cluster, NodeGroup, node ID and canonical IPv6 SANs from the SPIFFE URI and IP SANs', async () => {
    const issued = await leaf();
    const peer = peerIdentity(new X509Certificate(issued.certificatePem), 'prod');
    expect(peer).toEqual({
      cluster: 'prod',
      nodegroup: 'workers',
      nodeId: 'i-0abc',
      addresses: ['fd00::1'],
    });
    expect(peerIdentity(issued.certificatePem, 'prod')).toEqual(peer);
    expect(peerIdentity(issued.certificate.der, 'prod')).toEqual(peer);
  });

  it("refuses another cluster's SPIFFE URI, naming the trust domain", async () => {
    const issued = await leaf({ cluster: 'staging' });
    const err = thrownPodminError(() => peerIdentity(issued.certificatePem, 'prod'));
    expect(err.code).toBe('ACCESS_DENIED');
    expect(err.message).toBe(
      'authorizing coordination peer: SPIFFE ID spiffe://staging.podmin.internal/nodegroup/workers/node/i-0abc is outside trust domain prod.podmin.internal (another cluster)',
    );
  });

  it('refuses a workload SPIFFE ID of the right cluster (not a node path)', async () => {
    const key = parseWorkloadCaSecret(generateWorkloadCaSecretValue());
    const workload = await issueWorkloadLeaf(
      { certificate: await createWorkloadCaCertificate(key, 'prod', NOW), key },
      { cluster: 'prod', namespace: 'default', pod: 'web-0' },
      NOW,
    );
    expect(thrownPodminError(() => peerIdentity(workload.certificatePem, 'prod')).message).toMatch(
      /spiffe:\/\/prod\.podmin\.internal\/ns\/default\/pod\/web-0 is not a node ID/,
    );
  });

  it('refuses a missing or empty certificate and unreadable bytes', () => {
    expect(thrownPodminError(() => peerIdentity(undefined, 'prod')).message).toMatch(
      /no client certificate/,
    );
    expect(thrownPodminError(() => peerIdentity(new Uint8Array(), 'prod')).message).toMatch(
      /no client certificate/,
    );
    expect(
      thrownPodminError(() => peerIdentity(new Uint8Array([1, 2, 3]), 'prod')).message,
    ).toMatch(/unreadable certificate/);
  });
});

describe('canonicalIpv6', () => {
  it('canonicalises, strips brackets and zones, and rejects non-IPv6', () => {
    expect(canonicalIpv6('[FD00:0:0:0:0:0:0:1]')).toBe('fd00::1');
    expect(canonicalIpv6('fe80::1%eth0')).toBe('fe80::1');
    expect(canonicalIpv6('10.0.0.1')).toBeUndefined();
  });
});
