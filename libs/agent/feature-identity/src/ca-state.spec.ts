import { WorkloadCaKey, createWorkloadCaCertificate, hasPkiReason } from '@podmin/util-pki';
import type { CaState } from './ca-state';
import { parseCaState, serializeCaState, verifyCaState } from './ca-state';

const NOW = new Date('2030-01-01T00:00:00Z');
const key = WorkloadCaKey.fromSeed(Buffer.alloc(32, 5));

async function sampleState(): Promise<CaState> {
  const a = await createWorkloadCaCertificate(key, 'prod', NOW);
  const b = await createWorkloadCaCertificate(key, 'prod', new Date(NOW.getTime() + 1000));
  return {
    version: 1,
    certificates: [
      {
        pem: b.pem,
        state: 'pending',
        notAfter: b.notAfter.toISOString(),
        activateAfter: '2030-01-01T00:10:00.000Z',
      },
      { pem: a.pem, state: 'active', notAfter: a.notAfter.toISOString() },
    ],
  };
}

describe('identity/ca.json', () => {
  it('serialises canonically and parses back', async () => {
    const state = await sampleState();
    const text = serializeCaState(state);
    expect(text).toMatch(
      /^\{"certificates":\[\{"notAfter":"[^"]+","pem":"-----BEGIN CERTIFICATE-----\\n/,
    );
    expect(text.indexOf('"state":"active"')).toBeLessThan(text.indexOf('"state":"pending"'));
    expect(text.endsWith('"version":1}\n')).toBe(true);
    expect(serializeCaState(parseCaState(text))).toBe(text);
  });

  it('rejects duplicate keys, unknown fields and impossible states', async () => {
    const state = await sampleState();
    const active = state.certificates[1]!;
    const bad: Array<[string, RegExp]> = [
      ['{"version":1,"version":1,"certificates":[]}', /not strict JSON/],
      [JSON.stringify({ ...state, extra: true }), /unknown field extra/],
      [JSON.stringify({ ...state, version: 2 }), /version must be 1/],
      [JSON.stringify({ version: 1, certificates: [] }), /one or two entries/],
      [
        JSON.stringify({ version: 1, certificates: [active, active, active] }),
        /one or two entries/,
      ],
      [
        JSON.stringify({ version: 1, certificates: [{ ...active, state: 'pending' }] }),
        /exactly one certificate must be active/,
      ],
      [
        JSON.stringify({ version: 1, certificates: [{ ...active, retireAfter: active.notAfter }] }),
        /retireAfter not allowed on a active entry/,
      ],
      [
        JSON.stringify({ version: 1, certificates: [{ ...active, state: 'retired' }, active] }),
        /retireAfter: required/,
      ],
      [
        JSON.stringify({ version: 1, certificates: [{ ...active, notAfter: '2031-01-01' }] }),
        /notAfter: must be an ISO 8601/,
      ],
      [`${serializeCaState(state)}x`, /not strict JSON/],
    ];
    for (const [body, why] of bad) expect(() => parseCaState(body)).toThrow(why);
  });

  it('verifies every certificate against the stored key and its recorded notAfter', async () => {
    const state = await sampleState();
    const verified = verifyCaState(state, key, 'prod');
    expect(verified.active.pem).toBe(state.certificates[1]!.pem);
    // Bundle order is by expiry, so promotion does not change the bundle bytes.
    expect(verified.bundlePem).toBe(state.certificates[1]!.pem + state.certificates[0]!.pem);
    const otherKey = WorkloadCaKey.fromSeed(Buffer.alloc(32, 6));
    try {
      verifyCaState(state, otherKey, 'prod');
      throw new Error('accepted');
    } catch (err) {
      expect(hasPkiReason(err, 'CA_KEY_MISMATCH')).toBe(true);
    }
    const lying = {
      ...state,
      certificates: [{ ...state.certificates[1]!, notAfter: '2040-01-01T00:00:00.000Z' }],
    };
    expect(() => verifyCaState(lying, key, 'prod')).toThrow(/differs from the certificate's/);
  });
});
