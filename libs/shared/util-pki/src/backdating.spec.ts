import { X509Certificate } from 'node:crypto';
import { verifyIssuedBy } from './certificate';
import { CLOCK_SKEW_MARGIN_MS, DAY_MS, HOUR_MS, MINUTE_MS, SECOND_MS } from './clock';
import { hasPkiReason } from './errors';
import { createClusterCa, issueNodeLeaf } from './cluster-ca';
import { WorkloadCaKey, createWorkloadCaCertificate } from './workload-ca';
import { checkWorkloadLeaf, issueWorkloadLeaf } from './workload-leaf';

// Mid-second on purpose: validity has one-second resolution, lifetimes count from the second.
const ISSUED = new Date('2030-06-01T12:00:00.700Z');
const ISSUE_SECOND = Date.parse('2030-06-01T12:00:00Z');
const BEHIND_60S = new Date(ISSUED.getTime() - 60 * SECOND_MS);
const node = { cluster: 'prod', nodegroup: 'workers', nodeId: 'node-a', ipv6: '2001:db8::a' };
const web = { cluster: 'prod', namespace: 'shop', pod: 'web-0', service: 'web' };
const key = WorkloadCaKey.fromSeed(Buffer.alloc(32, 5));

/** What node's own X.509 parser says the validity window is, in epoch milliseconds. */
function nodeValidity(pem: string): { from: number; to: number } {
  const cert = new X509Certificate(pem);
  return { from: Date.parse(cert.validFrom), to: Date.parse(cert.validTo) };
}

describe('clock-skew backdating of every issued certificate', () => {
  it('is five minutes', () => {
    expect(CLOCK_SKEW_MARGIN_MS).toBe(5 * MINUTE_MS);
  });

  it('backdates node leaves and the cluster CA by the margin and keeps their lifetimes from the issue', async () => {
    const ca = await createClusterCa('prod', ISSUED);
    const leaf = await issueNodeLeaf(ca, node, ISSUED);
    expect(nodeValidity(ca.certificate.pem)).toEqual({
      from: ISSUE_SECOND - 5 * MINUTE_MS,
      to: ISSUE_SECOND + 3650 * DAY_MS,
    });
    expect(nodeValidity(leaf.certificatePem)).toEqual({
      from: ISSUE_SECOND - 5 * MINUTE_MS,
      to: ISSUE_SECOND + 24 * HOUR_MS,
    });
    expect(leaf.certificate.notBefore).toEqual(new Date(ISSUE_SECOND - CLOCK_SKEW_MARGIN_MS));
  });

  it('backdates workload leaves and the workload CA by the margin and keeps their lifetimes from the issue', async () => {
    const certificate = await createWorkloadCaCertificate(key, 'prod', ISSUED);
    const leaf = await issueWorkloadLeaf({ certificate, key }, web, ISSUED);
    expect(nodeValidity(certificate.pem)).toEqual({
      from: ISSUE_SECOND - 5 * MINUTE_MS,
      to: ISSUE_SECOND + 365 * DAY_MS,
    });
    expect(nodeValidity(leaf.certificatePem)).toEqual({
      from: ISSUE_SECOND - 5 * MINUTE_MS,
      to: ISSUE_SECOND + 24 * HOUR_MS,
    });
  });

  it('lets a verifier whose clock is 60 s behind the issuer accept fresh leaves', async () => {
    const clusterCa = await createClusterCa('prod', ISSUED);
    const nodeLeaf = await issueNodeLeaf(clusterCa, node, ISSUED);
    expect(verifyIssuedBy(nodeLeaf.certificate, [clusterCa.certificate], BEHIND_60S)).toBe(
      clusterCa.certificate,
    );
    const workloadCa = await createWorkloadCaCertificate(key, 'prod', ISSUED);
    const workload = await issueWorkloadLeaf({ certificate: workloadCa, key }, web, ISSUED);
    expect(
      checkWorkloadLeaf(
        workload.certificatePem,
        workload.privateKeyPem,
        web,
        [workloadCa],
        BEHIND_60S,
      ),
    ).toBeUndefined();
    // Beyond the margin the verifier still refuses: the window is backdated, not open-ended.
    const farBehind = new Date(ISSUED.getTime() - CLOCK_SKEW_MARGIN_MS - SECOND_MS);
    expect(() => verifyIssuedBy(nodeLeaf.certificate, [clusterCa.certificate], farBehind)).toThrow(
      /not valid at/,
    );
  });

  it('judges an expired issuer at the issue time, not at the backdated notBefore', async () => {
    const ca = await createClusterCa('prod', ISSUED, HOUR_MS);
    // The CA expired a minute ago: a backdated window would still fit, but the leaf would be dead.
    const late = new Date(ca.certificate.notAfter.getTime() + MINUTE_MS);
    const refused = await issueNodeLeaf(ca, node, late).catch((err: unknown) => err);
    expect(hasPkiReason(refused, 'CHAIN_INVALID')).toBe(true);
    const workloadCa = await createWorkloadCaCertificate(key, 'prod', ISSUED, HOUR_MS);
    await expect(issueWorkloadLeaf({ certificate: workloadCa, key }, web, late)).rejects.toThrow(
      /expired/,
    );
  });
});
