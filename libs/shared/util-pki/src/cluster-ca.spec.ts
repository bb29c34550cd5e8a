import type { Clock } from './clock';
import { CLOCK_SKEW_MARGIN_MS, DAY_MS, HOUR_MS } from './clock';
import { hasPkiReason } from './errors';
import {
  NodeLeafSource,
  createClusterCa,
  issueNodeLeaf,
  nodeSpiffeId,
  parseClusterCaSecret,
  serializeClusterCaSecret,
} from './cluster-ca';

const NOW = new Date('2030-01-01T00:00:00Z');
const node = { cluster: 'prod', nodegroup: 'workers', nodeId: 'i-0abc', ipv6: '2001:DB8:0:0::10' };

describe('cluster CA', () => {
  it('round-trips through its secret value format', async () => {
    const ca = await createClusterCa('prod', NOW);
    expect(ca.certificate.commonName).toBe('podmin cluster CA prod');
    expect(ca.certificate.notAfter.getTime() - NOW.getTime()).toBe(3650 * DAY_MS);
    const value = serializeClusterCaSecret(ca);
    expect(Object.keys(JSON.parse(value) as object)).toEqual([
      'certificate',
      'privateKey',
      'version',
    ]);
    expect(Buffer.byteLength(value)).toBeLessThan(4096);
    const back = parseClusterCaSecret(value, 'prod');
    expect(back.certificate.fingerprint).toBe(ca.certificate.fingerprint);
  });

  it('rejects malformed secret values without echoing the key', async () => {
    const ca = await createClusterCa('prod', NOW);
    const other = await createClusterCa('prod', NOW);
    const good = JSON.parse(serializeClusterCaSecret(ca)) as Record<string, unknown>;
    const bad: Array<[string, string]> = [
      ['not json', 'not JSON'],
      [JSON.stringify({ ...good, extra: 1 }), 'exactly the members'],
      [JSON.stringify({ ...good, version: 2 }), 'version must be 1'],
      [
        JSON.stringify({
          ...good,
          privateKey: JSON.parse(serializeClusterCaSecret(other)).privateKey,
        }),
        'does not match',
      ],
      [JSON.stringify({ ...good, privateKey: 'nope' }), 'unreadable'],
    ];
    for (const [value, why] of bad) {
      let caught: unknown;
      try {
        parseClusterCaSecret(value, 'prod');
      } catch (err) {
        caught = err;
      }
      expect(hasPkiReason(caught, 'INVALID_SECRET')).toBe(true);
      expect((caught as Error).message).toContain(why);
      expect((caught as Error).message).not.toContain('PRIVATE KEY');
    }
    expect(() => parseClusterCaSecret(serializeClusterCaSecret(ca), 'staging')).toThrow(
      /not cluster staging/,
    );
  });

  it('issues node leaves with IP SAN, one SPIFFE URI and both TLS usages', async () => {
    const ca = await createClusterCa('prod', NOW);
    const leaf = await issueNodeLeaf(ca, node, NOW);
    expect(leaf.certificate.uris).toEqual([
      'spiffe://prod.podmin.internal/nodegroup/workers/node/i-0abc',
    ]);
    expect(leaf.certificate.ipAddresses).toEqual(['2001:db8::10']);
    expect(leaf.certificate.extendedKeyUsages).toEqual(['serverAuth', 'clientAuth']);
    expect(leaf.certificate.notAfter.getTime() - NOW.getTime()).toBe(24 * HOUR_MS);
    await expect(issueNodeLeaf(ca, { ...node, ipv6: '10.0.0.1' }, NOW)).rejects.toThrow(
      /not an IPv6/,
    );
    expect(() => nodeSpiffeId({ ...node, nodegroup: 'Bad_Group' })).toThrow(/NodeGroup/);
  });

  it('renews the in-memory node leaf before it expires', async () => {
    const ca = await createClusterCa('prod', NOW);
    let now = NOW;
    const clock: Clock = { now: () => now };
    const source = new NodeLeafSource(ca, node, clock);
    const [first, same] = await Promise.all([source.leaf(), source.leaf()]);
    expect(same).toBe(first);
    now = new Date(NOW.getTime() + 16 * HOUR_MS - 1000);
    expect(await source.leaf()).toBe(first);
    now = new Date(NOW.getTime() + 16 * HOUR_MS);
    const renewed = await source.leaf();
    expect(renewed).not.toBe(first);
    expect(renewed.certificate.notBefore).toEqual(new Date(now.getTime() - CLOCK_SKEW_MARGIN_MS));
  });
});
