import { hasCode } from '@podmin/util-errors';
import {
  parseIndex,
  podPayloadKey,
  serializeIndex,
  servicePayloadKey,
  sha512Hex,
  verifyPayload,
  withDeployment,
  withoutDeployment,
  parseDeploymentKey,
  parsePodKey,
} from './desired-index';

const pod = podPayloadKey('workers', 'kind: Pod\n');
const svc = servicePayloadKey('product', 'frontend', 'kind: Service\n');

describe('desired index', () => {
  it('names payloads by SHA-512 of their bytes', () => {
    expect(pod).toBe(`nodegroups/workers/pods/sha512/${sha512Hex('kind: Pod\n')}.yaml`);
    expect(svc).toMatch(/^services\/product\/frontend\/sha512\/[0-9a-f]{128}\.yaml$/);
  });

  it('serializes in the spec shape with sorted keys and omits an absent service', () => {
    const text = serializeIndex({
      'workers/web': { pod, service: svc },
      'a/b': { pod: podPayloadKey('a', 'x') },
    });
    expect(Object.keys(JSON.parse(text) as object)).toEqual(['a/b', 'workers/web']);
    expect(text).toContain(`"workers/web": {\n    "pod": "${pod}",\n    "service": "${svc}"\n  }`);
    expect(text).not.toContain('"service": undefined');
    expect(parseIndex(text)).toEqual({
      'workers/web': { pod, service: svc },
      'a/b': { pod: podPayloadKey('a', 'x') },
    });
  });

  it('rejects duplicate keys, unknown fields and foreign paths', () => {
    const dup = `{"workers/web": {"pod": "${pod}"}, "workers/web": {"pod": "${pod}"}}`;
    expect(() => parseIndex(dup)).toThrow(/workers\/web: duplicate key/);
    expect(() => parseIndex(`{"workers/web": {"pod": "${pod}", "extra": 1}}`)).toThrow(
      /workers\/web.extra: unknown field/,
    );
    expect(() => parseIndex(`{"other/web": {"pod": "${pod}"}}`)).toThrow(/other\/web.pod/);
    expect(() => parseIndex('[]')).toThrow(/must be a JSON object/);
    expect(() => parseIndex('{')).toThrow(/not valid JSON/);
    expect(() => parseIndex(`{"Bad/web": {"pod": "${pod}"}}`)).toThrow(/Bad\/web/);
  });

  it('keeps one owner per namespaced Service across NodeGroups', () => {
    const index = withDeployment({}, 'workers/web', { pod, service: svc });
    const other = {
      pod: podPayloadKey('edge', 'y'),
      service: servicePayloadKey('product', 'frontend', 'other'),
    };
    let caught: unknown;
    try {
      withDeployment(index, 'edge/web2', other);
    } catch (err) {
      caught = err;
    }
    expect(hasCode(caught, 'ALREADY_EXISTS')).toBe(true);
    expect(String(caught)).toContain('workers/web');
    // The owner itself may update its Service payload.
    expect(
      withDeployment(index, 'workers/web', { pod, service: other.service })['workers/web']?.service,
    ).toBe(other.service);
    expect(withoutDeployment(index, 'workers/web')).toEqual({});
  });

  it('refuses, on read, an index another tool edited to give one Service two owners', () => {
    const edited = JSON.stringify({
      'workers/web': { pod, service: svc },
      'edge/web2': {
        pod: podPayloadKey('edge', 'y'),
        service: servicePayloadKey('product', 'frontend', 'other'),
      },
      'edge/api': {
        pod: podPayloadKey('edge', 'z'),
        service: servicePayloadKey('product', 'api', 'z'),
      },
    });
    let caught: unknown;
    try {
      parseIndex(edited);
    } catch (err) {
      caught = err;
    }
    expect(hasCode(caught, 'INVALID_MANIFEST')).toBe(true);
    expect(String(caught)).toContain(
      'Service product/frontend is owned by edge/web2 and workers/web; exactly one index entry may own a namespaced Service',
    );
    expect(String(caught)).not.toContain('product/api');
    // Distinct Services with the same name in different namespaces are different identities.
    const twoNamespaces = serializeIndex({
      'workers/web': { pod, service: svc },
      'edge/web2': {
        pod: podPayloadKey('edge', 'y'),
        service: servicePayloadKey('staging', 'frontend', 'other'),
      },
    });
    expect(Object.keys(parseIndex(twoNamespaces))).toEqual(['edge/web2', 'workers/web']);
  });

  it('verifies payload bytes against the digest in the key', () => {
    expect(() => verifyPayload(pod, Buffer.from('kind: Pod\n'))).not.toThrow();
    expect(() => verifyPayload(pod, Buffer.from('kind: Pod\nx: 1\n'))).toThrow(
      /not the digest in its path/,
    );
  });

  it('parses deployment keys', () => {
    expect(parseDeploymentKey('workers/web')).toEqual({ nodegroup: 'workers', name: 'web' });
    expect(() => parseDeploymentKey('workers/web/x')).toThrow(/<nodegroup>\/<deployment>/);
  });
});

describe('the index fast paths', () => {
  const hex = 'ab01'.repeat(32);
  it('parsePodKey accepts exactly what the Pod key pattern describes', () => {
    const pattern = /^nodegroups\/([^/]+)\/pods\/sha512\/([0-9a-f]{128})\.yaml$/;
    const keys = [
      `nodegroups/web/pods/sha512/${hex}.yaml`,
      `nodegroups/a/b/pods/sha512/${hex}.yaml`,
      `nodegroups//pods/sha512/${hex}.yaml`,
      `nodegroups/web/pods/sha512/${hex.toUpperCase()}.yaml`,
      `nodegroups/web/pods/sha512/${hex}0.yaml`,
      `nodegroups/web/pods/sha512/${hex.slice(1)}.yaml`,
      `nodegroups/web/pods/sha512/${hex}.yaml\n`,
      `nodegroups/web/pods/sha512/${hex}.yml`,
      `nodegroups/pods/sha512//pods/sha512/${hex}.yaml`,
      `nodegroups/x/pods/sha512/${hex.slice(0, 127)}g.yaml`,
      `Nodegroups/web/pods/sha512/${hex}.yaml`,
      `nodegroups/web/pods/sha256/${hex}.yaml`,
    ];
    for (const key of keys) {
      const m = pattern.exec(key);
      expect([key, parsePodKey(key)]).toEqual([
        key,
        m ? { nodegroup: m[1], digest: m[2] } : undefined,
      ]);
    }
  });

  it('refuses a duplicate key however deep, and names it', () => {
    const pod = `nodegroups/web/pods/sha512/${hex}.yaml`;
    const twice = `{"web/a": {"pod": "${pod}"}, "web/a": {"pod": "${pod}"}}`;
    expect(() => parseIndex(twice)).toThrow(/web\/a/);
    const inner = `{"web/a": {"pod": "${pod}", "pod": "${pod}"}}`;
    expect(() => parseIndex(inner)).toThrow(/duplicate key/);
    // Colons and escaped quotes inside strings are not keys.
    const tricky = `{"web/a": {"pod": "${pod}"}, "web/b": {"pod": "${pod}", "x\\":": "a:b"}}`;
    expect(() => parseIndex(tricky)).toThrow(/unknown field/);
  });

  it('still names every Service with two owners, owners sorted', () => {
    const pod = `nodegroups/web/pods/sha512/${hex}.yaml`;
    const svc = `services/default/web/sha512/${hex}.yaml`;
    const text = JSON.stringify({
      'web/c': { pod, service: svc },
      'web/a': { pod, service: svc },
    });
    expect(() => parseIndex(text)).toThrow(/owned by web\/a and web\/c/);
  });
});
