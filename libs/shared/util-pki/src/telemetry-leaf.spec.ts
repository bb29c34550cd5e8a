import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { CLOCK_SKEW_MARGIN_MS, HOUR_MS } from './clock';
import { hasPkiReason } from './errors';
import {
  checkTelemetryLeaf,
  issueTelemetryLeaf,
  otelLogsSpiffeId,
  validateCaBundle,
} from './telemetry-leaf';
import { issueWorkloadLeaf, type WorkloadIssuer } from './workload-leaf';
import { workloadIssuer } from './__fixtures__/workload-issuer';

const NOW = new Date('2030-03-01T12:00:00Z');
const node = { cluster: 'prod', nodeId: 'ip-10-0-1-5.ec2.internal' };
let issuer: WorkloadIssuer;

beforeAll(async () => {
  issuer = await workloadIssuer(7, NOW);
});

describe('the log-export client leaf', () => {
  it('names the node by the spec’s SPIFFE ID, for 24 hours, client auth only', async () => {
    const leaf = await issueTelemetryLeaf(issuer, node, NOW);
    const cert = leaf.certificate;
    expect(cert.uris).toEqual([
      'spiffe://prod.podmin.internal/system/otel-logs/node/ip-10-0-1-5.ec2.internal',
    ]);
    expect(cert.extendedKeyUsages).toEqual(['clientAuth']);
    expect(cert.keyUsages).toEqual(['digitalSignature']);
    expect(cert.dnsNames).toEqual([]);
    expect(cert.isCa).toBe(false);
    expect(cert.notBefore).toEqual(new Date(NOW.getTime() - CLOCK_SKEW_MARGIN_MS));
    expect(cert.notAfter.getTime() - NOW.getTime()).toBe(24 * HOUR_MS);
    expect(
      checkTelemetryLeaf(leaf.certificatePem, leaf.privateKeyPem, node, [issuer.certificate], NOW),
    ).toBeUndefined();
  });

  it('openssl accepts it as a TLS client and refuses it as a TLS server', async () => {
    const leaf = await issueTelemetryLeaf(issuer, node, new Date());
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'telemetry-leaf-'));
    const caNow = await workloadIssuer(7, new Date());
    const fresh = await issueTelemetryLeaf(caNow, node, new Date());
    fs.writeFileSync(path.join(dir, 'ca.pem'), caNow.certificate.pem);
    fs.writeFileSync(path.join(dir, 'leaf.pem'), fresh.certificatePem);
    const verify = (purpose: string) =>
      promisify(execFile)('openssl', [
        'verify',
        '-purpose',
        purpose,
        '-CAfile',
        path.join(dir, 'ca.pem'),
        path.join(dir, 'leaf.pem'),
      ]);
    await expect(verify('sslclient')).resolves.toMatchObject({
      stdout: expect.stringContaining('OK'),
    });
    await expect(verify('sslserver')).rejects.toThrow(/unsuitable certificate purpose/);
    expect(leaf.certificate.extendedKeyUsages).toEqual(['clientAuth']);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('is replaced when its key, chain, names or lifetime no longer fit', async () => {
    const leaf = await issueTelemetryLeaf(issuer, node, NOW);
    const other = await issueTelemetryLeaf(issuer, node, NOW);
    const check = (cert: string, k: string, id = node, at = NOW) =>
      checkTelemetryLeaf(cert, k, id, [issuer.certificate], at);
    expect(check(leaf.certificatePem, other.privateKeyPem)).toBe('key-mismatch');
    expect(check('garbage', leaf.privateKeyPem)).toBe('unreadable');
    expect(check(leaf.certificatePem, leaf.privateKeyPem, { ...node, nodeId: 'i-0abc' })).toBe(
      'identity-changed',
    );
    // A workload leaf from the same CA is not a log-export leaf.
    const workload = await issueWorkloadLeaf(
      issuer,
      { cluster: 'prod', namespace: 'a', pod: 'b' },
      NOW,
    );
    expect(check(workload.certificatePem, workload.privateKeyPem)).toBe('identity-changed');
    expect(
      check(leaf.certificatePem, leaf.privateKeyPem, node, new Date(NOW.getTime() + 18 * HOUR_MS)),
    ).toBe('renewal-due');
    const foreign = (await workloadIssuer(9, NOW)).certificate;
    expect(checkTelemetryLeaf(leaf.certificatePem, leaf.privateKeyPem, node, [foreign], NOW)).toBe(
      'untrusted',
    );
  });

  it('refuses node IDs that are not one SPIFFE path segment', () => {
    for (const nodeId of ['..', 'a/b', '', 'x'.repeat(64), 'ip 1'])
      expect(() => otelLogsSpiffeId({ cluster: 'prod', nodeId })).toThrow(/node ID/);
  });
});

describe('the exporter’s private server-CA bundle', () => {
  it('accepts CA certificates only, normalised', async () => {
    const second = (await workloadIssuer(3, NOW, 'b')).certificate;
    const bundle = `\n${issuer.certificate.pem.replace(/\n/g, '\r\n')}\n${second.pem}`;
    expect(validateCaBundle(Buffer.from(bundle), NOW)).toBe(issuer.certificate.pem + second.pem);
  });

  it('refuses a key, a leaf, text around the blocks, an empty or expired bundle, naming why', async () => {
    const leaf = await issueTelemetryLeaf(issuer, node, NOW);
    const refuse = (text: string, at = NOW) => {
      try {
        validateCaBundle(Buffer.from(text), at, 'ca=s3://b/ca.pem');
      } catch (err) {
        expect(hasPkiReason(err, 'INVALID_CERTIFICATE')).toBe(true);
        return (err as Error).message;
      }
      throw new Error('accepted');
    };
    expect(refuse(issuer.certificate.pem + leaf.privateKeyPem)).toContain('contains a private key');
    expect(refuse(leaf.certificatePem)).toContain(
      'certificate 1 (CN=otel-logs.ip-10-0-1-5.ec2.internal) is not a CA',
    );
    expect(refuse(`hello\n${issuer.certificate.pem}`)).toContain(
      'expected only PEM CERTIFICATE blocks',
    );
    expect(refuse('')).toContain('expected only PEM CERTIFICATE blocks');
    expect(refuse(issuer.certificate.pem, new Date('2040-01-01T00:00:00Z'))).toContain(
      'no certificate in it is valid',
    );
    expect(() => validateCaBundle(Buffer.alloc(2 * 1024 * 1024), NOW)).toThrow(
      /more than the 1048576/,
    );
  });
});
