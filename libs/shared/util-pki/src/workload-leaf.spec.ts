import { createHash } from 'node:crypto';
import { parseCertificate } from './certificate';
import { CLOCK_SKEW_MARGIN_MS, HOUR_MS } from './clock';
import { parseEd25519PrivateKeyPem, publicKeysEqual } from './ed25519';
import type { WorkloadIdentity, WorkloadIssuer } from './workload-leaf';
import {
  checkWorkloadLeaf,
  issueWorkloadLeaf,
  serviceDnsNames,
  workloadSpiffeId,
} from './workload-leaf';
import { workloadIssuer } from './__fixtures__/workload-issuer';

const NOW = new Date('2030-03-01T12:00:00Z');
const web = { cluster: 'prod', namespace: 'shop', pod: 'web-7f9c' };
let issuer: WorkloadIssuer;

beforeAll(async () => {
  issuer = await workloadIssuer(1, NOW);
});

describe('workload leaves', () => {
  it('names the Pod with its SPIFFE ID and only client auth without a Service', async () => {
    const leaf = await issueWorkloadLeaf(issuer, web, NOW);
    const cert = leaf.certificate;
    expect(cert.commonName).toBe('web-7f9c');
    expect(cert.uris).toEqual(['spiffe://prod.podmin.internal/ns/shop/pod/web-7f9c']);
    expect(cert.dnsNames).toEqual([]);
    expect(cert.extendedKeyUsages).toEqual(['clientAuth']);
    expect(cert.keyUsages).toEqual(['digitalSignature']);
    expect(cert.isCa).toBe(false);
    expect(cert.notBefore).toEqual(new Date(NOW.getTime() - CLOCK_SKEW_MARGIN_MS));
    expect(cert.notAfter.getTime() - NOW.getTime()).toBe(24 * HOUR_MS);
    expect(cert.issuer).toBe(issuer.certificate.subject);
    expect(cert.fingerprint).toBe(createHash('sha256').update(cert.der).digest('hex'));
    expect(leaf.privateKeyPem).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    expect(
      publicKeysEqual(parseEd25519PrivateKeyPem(leaf.privateKeyPem).publicKey, cert.publicKey),
    ).toBe(true);
  });

  it('adds server auth and the three qualified Service names, never the bare name', async () => {
    const leaf = await issueWorkloadLeaf(issuer, { ...web, service: 'api' }, NOW);
    expect(leaf.certificate.dnsNames).toEqual([
      'api.shop.svc.cluster.local',
      'api.shop.svc',
      'api.shop',
    ]);
    expect(leaf.certificate.dnsNames).not.toContain('api');
    expect(leaf.certificate.extendedKeyUsages).toEqual(['clientAuth', 'serverAuth']);
    expect(serviceDnsNames('shop', 'api')).toHaveLength(3);
  });

  it('uses a fresh key and serial for every leaf', async () => {
    const [a, b] = await Promise.all([
      issueWorkloadLeaf(issuer, web, NOW),
      issueWorkloadLeaf(issuer, web, NOW),
    ]);
    expect(a.privateKeyPem).not.toBe(b.privateKeyPem);
    expect(a.certificate.serialNumber).not.toBe(b.certificate.serialNumber);
  });

  it('never outlives the issuing CA certificate', async () => {
    const late = new Date(issuer.certificate.notAfter.getTime() - 2 * HOUR_MS);
    const leaf = await issueWorkloadLeaf(issuer, web, late);
    expect(leaf.certificate.notAfter).toEqual(issuer.certificate.notAfter);
    await expect(issueWorkloadLeaf(issuer, web, issuer.certificate.notAfter)).rejects.toThrow(
      /expired/,
    );
  });

  it('rejects names that would make an invalid or ambiguous SPIFFE ID', () => {
    expect(() => workloadSpiffeId({ ...web, pod: '../x' })).toThrow(/Pod name/);
    expect(() => workloadSpiffeId({ ...web, namespace: 'Shop' })).toThrow(/namespace/);
    expect(() => serviceDnsNames('shop', 'a.b')).toThrow(/Service/);
  });

  it('reports whether an existing leaf can be reused', async () => {
    const leaf = await issueWorkloadLeaf(issuer, { ...web, service: 'api' }, NOW);
    const cas = [issuer.certificate];
    const id: WorkloadIdentity = { ...web, service: 'api' };
    const check = (at: Date, identity = id, keyPem = leaf.privateKeyPem, certs = cas) =>
      checkWorkloadLeaf(leaf.certificatePem, keyPem, identity, certs, at);
    expect(check(NOW)).toBeUndefined();
    expect(check(new Date(NOW.getTime() + 18 * HOUR_MS - 1000))).toBeUndefined();
    expect(check(new Date(NOW.getTime() + 18 * HOUR_MS))).toBe('renewal-due');
    expect(check(new Date(NOW.getTime() + 25 * HOUR_MS))).toBe('untrusted');
    expect(check(NOW, web)).toBe('identity-changed');
    expect(check(NOW, { ...id, namespace: 'other' })).toBe('identity-changed');
    const other = await issueWorkloadLeaf(issuer, web, NOW);
    expect(check(NOW, id, other.privateKeyPem)).toBe('key-mismatch');
    expect(check(NOW, id, 'garbage')).toBe('unreadable');
    const foreign = (await workloadIssuer(2, NOW)).certificate;
    expect(check(NOW, id, leaf.privateKeyPem, [foreign])).toBe('untrusted');
    expect(parseCertificate(leaf.certificatePem).pem).toBe(leaf.certificatePem);
  });
});
