import { podPayloadKey } from '@podmin/util-desired-state';
import {
  MAX_REASON_CHARS,
  MAX_RECEIPT_BYTES,
  MAX_RECEIPT_PODS,
  parseReceiptKey,
  podRevision,
  receiptChangeKey,
  receiptKey,
  serializeReceipt,
  type NodeReceipt,
  type PodReceipt,
} from './receipt';
import { parseReceipt } from './receipt-parser';

const pod = (name: string, over: Partial<PodReceipt> = {}): PodReceipt => ({
  deployment: `default/${name}`,
  revision: 'abcdef012345',
  ready: true,
  restarts: 0,
  reason: null,
  identityExpiry: '2026-12-02T10:00:00.000Z',
  ...over,
});

const receipt = (over: Partial<NodeReceipt> = {}): NodeReceipt => ({
  schema: 1,
  nodegroup: 'default',
  node: 'i-0abc',
  agentVersion: '0.1.0',
  indexEtag: '"e1"',
  time: '2026-12-01T22:00:00.000Z',
  heartbeatSeconds: 300,
  kubelet: 'ok',
  error: null,
  pods: [pod('web')],
  omittedPods: 0,
  ...over,
});

describe('receipt keys and revisions', () => {
  it('names status/<nodegroup>/<node-id>.json and parses it back', () => {
    expect(receiptKey('default', 'i-0abc')).toBe('status/default/i-0abc.json');
    expect(parseReceiptKey('status/default/i-0abc.json')).toEqual({
      nodegroup: 'default',
      node: 'i-0abc',
    });
    expect(parseReceiptKey('status/Bad_NG/x.json')).toBeUndefined();
    expect(parseReceiptKey('status/default/x.txt')).toBeUndefined();
    expect(() => receiptKey('default', '../x')).toThrow(/node ID/);
  });

  it('derives the revision from the Pod payload key as the first 12 hex of its SHA-512', () => {
    const key = podPayloadKey('default', 'kind: Pod\n');
    expect(podRevision(key)).toBe(key.split('/sha512/')[1]?.slice(0, 12));
    expect(podRevision(key)).toMatch(/^[0-9a-f]{12}$/);
    expect(() => podRevision('deployments/index.json')).toThrow(/not a Pod payload key/);
  });
});

describe('serializeReceipt / parseReceipt', () => {
  it('round-trips, with Pods sorted', () => {
    const r = receipt({ pods: [pod('web'), pod('api', { ready: null, restarts: null })] });
    const parsed = parseReceipt(serializeReceipt(r), { nodegroup: 'default', node: 'i-0abc' });
    expect(parsed.pods.map((p) => p.deployment)).toEqual(['default/api', 'default/web']);
    expect(parsed.pods[0]).toMatchObject({ ready: null, restarts: null });
    expect(parsed).toEqual({ ...r, pods: [...r.pods].reverse() });
  });

  it('caps Pods and reasons and stays under the size bound at every cap', () => {
    const long = `"\\${'x'.repeat(2 * MAX_REASON_CHARS)}`;
    const many = Array.from({ length: MAX_RECEIPT_PODS + 5 }, (_, i) =>
      pod(`${'n'.repeat(58)}${String(i).padStart(5, '0')}`, {
        reason: '€'.repeat(MAX_REASON_CHARS * 2),
      }),
    ).map((p) => ({ ...p, deployment: `${'g'.repeat(63)}/${p.deployment.slice(8)}` }));
    const r = receipt({
      nodegroup: 'g'.repeat(63),
      node: 'n'.repeat(63),
      pods: many,
      error: long,
      indexEtag: `"${'f'.repeat(64)}"`,
    });
    const text = serializeReceipt(r);
    expect(Buffer.byteLength(text)).toBeLessThan(MAX_RECEIPT_BYTES);
    expect(Buffer.byteLength(text)).toBeGreaterThan(100 * 1024);
    const parsed = parseReceipt(text);
    expect(parsed.pods).toHaveLength(MAX_RECEIPT_PODS);
    expect(parsed.omittedPods).toBe(5);
    expect([...(parsed.pods[0]?.reason ?? '')]).toHaveLength(MAX_REASON_CHARS);
    expect(parsed.error).not.toMatch(/[\n]/);
  });

  it('ignores only the time when comparing for a write', () => {
    expect(receiptChangeKey(receipt())).toBe(
      receiptChangeKey(receipt({ time: '2027-01-01T00:00:00Z' })),
    );
    expect(receiptChangeKey(receipt())).not.toBe(
      receiptChangeKey(receipt({ pods: [pod('web', { ready: false })] })),
    );
  });

  const good = serializeReceipt(receipt());
  it.each([
    [
      'an unknown field',
      good.replace('"schema": 1', '"schema": 1, "extra": 1'),
      /extra is an unknown field/,
    ],
    [
      'an unknown Pod field',
      good.replace('"deployment"', '"secret": "x", "deployment"'),
      /pods\[0\]\.secret is an unknown field/,
    ],
    ['a duplicate key', good.replace('"schema": 1', '"schema": 1, "schema": 1'), /duplicate key/],
    ['trailing data', `${good}{}`, /trailing data/],
    ['another schema', good.replace('"schema": 1', '"schema": 2'), /schema must be 1/],
    [
      'a missing field',
      good.replace(/ "omittedPods": 0\n/, ' "x": 0\n'),
      /x is an unknown field|omittedPods is missing/,
    ],
    [
      'a bad revision',
      good.replace('abcdef012345', 'ABC'),
      /revision must be null or 12 lowercase hex/,
    ],
    ['a foreign deployment', good.replace('default/web', 'other/web'), /not in NodeGroup default/],
    ['a bad time', good.replace('2026-12-01T22:00:00.000Z', 'yesterday'), /RFC 3339/],
    ['oversized input', ' '.repeat(MAX_RECEIPT_BYTES + 1), /over the/],
    ['not JSON', 'nope', /unexpected character/],
  ])('rejects %s', (_, body, message) => {
    expect(() => parseReceipt(body)).toThrow(message);
  });

  it('rejects a receipt that names another node than its key', () => {
    expect(() => parseReceipt(good, { nodegroup: 'default', node: 'i-other' })).toThrow(
      /not the node its key names/,
    );
  });
});
