import { X509Certificate } from 'node:crypto';
import { CLOCK_SKEW_MARGIN_MS, DAY_MS } from './clock';
import { hasPkiReason } from './errors';
import {
  WorkloadCaKey,
  createWorkloadCaCertificate,
  generateWorkloadCaSecretValue,
  parseWorkloadCaSecret,
  verifyWorkloadCaCertificate,
} from './workload-ca';

const NOW = new Date('2030-01-01T00:00:00.500Z');
const SEED = Buffer.alloc(32, 7);

describe('workload CA', () => {
  it('derives the same key from the same secret value every time', () => {
    const value = SEED.toString('base64');
    const a = parseWorkloadCaSecret(value);
    const b = parseWorkloadCaSecret(`${value}\n`);
    expect(a.publicKey.export({ format: 'der', type: 'spki' })).toEqual(
      b.publicKey.export({ format: 'der', type: 'spki' }),
    );
    expect(JSON.stringify({ a })).toBe('{"a":"[WorkloadCaKey]"}');
    expect(String(a)).toBe('[WorkloadCaKey]');
  });

  it('generates secret values it can read back', () => {
    const value = generateWorkloadCaSecretValue();
    expect(value).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(() => parseWorkloadCaSecret(value)).not.toThrow();
  });

  it.each([
    '',
    'not base64',
    Buffer.alloc(31).toString('base64'),
    Buffer.alloc(33).toString('base64'),
    Buffer.alloc(32).toString('hex'),
  ])('rejects the secret value %j without echoing it', (value) => {
    let caught: unknown;
    try {
      parseWorkloadCaSecret(value);
    } catch (err) {
      caught = err;
    }
    expect(hasPkiReason(caught, 'INVALID_SECRET')).toBe(true);
    if (value !== '') expect((caught as Error).message).not.toContain(value);
  });

  it('creates a one-year self-signed CA certificate for the cluster', async () => {
    const key = WorkloadCaKey.fromSeed(SEED);
    const cert = await createWorkloadCaCertificate(key, 'prod', NOW);
    expect(cert.commonName).toBe('podmin workload CA prod');
    expect(cert.subject).toBe(cert.issuer);
    expect(cert.isCa).toBe(true);
    expect(cert.keyUsages).toEqual(['keyCertSign', 'cRLSign']);
    // Backdated from the issue second; the year is counted from the issue second.
    expect(cert.notBefore.getTime()).toBe(
      Date.parse('2030-01-01T00:00:00Z') - CLOCK_SKEW_MARGIN_MS,
    );
    expect(cert.notAfter.toISOString()).toBe('2031-01-01T00:00:00.000Z');
    expect(cert.notAfter.getTime() - cert.notBefore.getTime()).toBe(
      365 * DAY_MS + CLOCK_SKEW_MARGIN_MS,
    );
    expect(new X509Certificate(cert.der).verify(key.publicKey)).toBe(true);
    expect(verifyWorkloadCaCertificate(cert.pem, key, 'prod').fingerprint).toBe(cert.fingerprint);
  });

  it('refuses a CA certificate that does not certify the stored key', async () => {
    const other = await createWorkloadCaCertificate(
      WorkloadCaKey.fromSeed(Buffer.alloc(32, 9)),
      'prod',
      NOW,
    );
    const key = WorkloadCaKey.fromSeed(SEED);
    expect(() => verifyWorkloadCaCertificate(other.pem, key, 'prod')).toThrow(
      /not the stored workload CA key/,
    );
    try {
      verifyWorkloadCaCertificate(other.pem, key, 'prod');
    } catch (err) {
      expect(hasPkiReason(err, 'CA_KEY_MISMATCH')).toBe(true);
    }
  });

  it('refuses a CA certificate of another cluster', async () => {
    const key = WorkloadCaKey.fromSeed(SEED);
    const cert = await createWorkloadCaCertificate(key, 'staging', NOW);
    expect(() => verifyWorkloadCaCertificate(cert.pem, key, 'prod')).toThrow(
      /not the self-signed workload CA of cluster prod/,
    );
  });
});
