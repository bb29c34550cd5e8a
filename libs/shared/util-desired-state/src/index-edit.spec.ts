import {
  ServiceOwnedError,
  parseIndex,
  podPayloadKey,
  serializeIndex,
  servicePayloadKey,
  withDeployment,
  withoutDeployment,
  type DesiredIndex,
  type IndexEntry,
} from './desired-index';
import { editCanonicalIndex } from './index-edit';

// A small deterministic generator, so a failing case can be replayed from its seed.
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const groups = ['a', 'ng-1', 'web', 'z9'];
const names = ['api', 'b', 'front-end', 'x', 'y0'];
const services = ['default/api', 'default/web', 'shop/cart', 'shop/web'];

function randomEntry(next: () => number, nodegroup: string, useService: boolean): IndexEntry {
  const pod = podPayloadKey(nodegroup, `pod ${Math.floor(next() * 5)}`);
  if (!useService) return { pod };
  const [ns, name] = (services[Math.floor(next() * services.length)] as string).split('/');
  return { pod, service: servicePayloadKey(ns as string, name as string, `svc ${next()}`) };
}

/** What the parsed path gives: the index after the change, or the error it throws. */
function parsedEdit(text: string, key: string, entry: IndexEntry | null): string | Error {
  try {
    const index = parseIndex(text);
    if (entry === null) return serializeIndex(withoutDeployment(index, key));
    return serializeIndex(withDeployment(index, key, entry));
  } catch (err) {
    return err as Error;
  }
}

describe('editCanonicalIndex', () => {
  it('gives byte for byte what parse, change and serialize give, over random indexes and edits', () => {
    let fastPaths = 0;
    for (let seed = 1; seed <= 400; seed++) {
      const next = random(seed);
      let index: DesiredIndex = {};
      const used = new Set<string>();
      const size = Math.floor(next() * 8);
      for (let i = 0; i < size; i++) {
        const ng = groups[Math.floor(next() * groups.length)] as string;
        const key = `${ng}/${names[Math.floor(next() * names.length)]}`;
        const entry = randomEntry(next, ng, next() < 0.4);
        const parts = entry.service?.split('/');
        const identity = parts ? `${parts[1]}/${parts[2]}` : undefined;
        if (identity && used.has(identity)) continue;
        if (identity) used.add(identity);
        index = { ...index, [key]: entry };
      }
      const text = serializeIndex(index);
      const ng = groups[Math.floor(next() * groups.length)] as string;
      const key = next() < 0.5 && size > 0 ? (Object.keys(index)[0] as string) : `${ng}/x`;
      const ownGroup = key.split('/')[0] as string;
      const entry =
        next() < 0.3
          ? null
          : next() < 0.2 && index[key]
            ? index[key]
            : randomEntry(next, ownGroup, next() < 0.5);
      const expected = parsedEdit(text, key, entry);
      let edit: ReturnType<typeof editCanonicalIndex>;
      try {
        edit = editCanonicalIndex(text, key, entry);
      } catch (err) {
        // The only error the edit throws is the Service owner, where withDeployment throws it too.
        expect(err).toBeInstanceOf(ServiceOwnedError);
        expect(expected).toBeInstanceOf(ServiceOwnedError);
        expect((err as Error).message).toBe((expected as Error).message);
        continue;
      }
      expect(edit).toBeDefined();
      fastPaths++;
      expect(edit?.previous).toEqual(index[key]);
      expect(edit?.text ?? text).toBe(expected);
      // Unchanged exactly when the parsed path changes nothing.
      expect(edit?.text === undefined).toBe(expected === text);
    }
    expect(fastPaths).toBeGreaterThan(300);
  });

  it('inserts first, between and last, and removes the only, first, middle and last entry', () => {
    const e = (ng: string): IndexEntry => ({ pod: podPayloadKey(ng, ng) });
    const three = serializeIndex({ 'b/x': e('b'), 'd/x': e('d'), 'f/x': e('f') });
    for (const key of ['a/x', 'c/x', 'e/x', 'g/x', 'b/x', 'f/x']) {
      const entry = e(key.split('/')[0] as string);
      // b/x and f/x are already set to this entry: unchanged, nothing to write.
      const edit = editCanonicalIndex(three, key, entry);
      expect(edit?.text ?? three).toBe(parsedEdit(three, key, entry));
    }
    for (const key of ['b/x', 'd/x', 'f/x'])
      expect(editCanonicalIndex(three, key, null)?.text).toBe(parsedEdit(three, key, null));
    const one = serializeIndex({ 'b/x': e('b') });
    expect(editCanonicalIndex(one, 'b/x', null)?.text).toBe('{}\n');
    expect(editCanonicalIndex('{}\n', 'b/x', e('b'))?.text).toBe(one);
    expect(editCanonicalIndex('{}\n', 'b/x', null)).toEqual({
      previous: undefined,
      text: undefined,
    });
  });

  it('leaves every text that is not exactly canonical to the parsed path', () => {
    const pod = podPayloadKey('web', 'p');
    const other = podPayloadKey('api', 'p');
    const canonical = serializeIndex({ 'web/a': { pod }, 'web/b': { pod } });
    const cases: Record<string, string> = {
      compact: JSON.stringify({ 'web/a': { pod }, 'web/b': { pod } }),
      'no trailing newline': canonical.slice(0, -1),
      crlf: canonical.replace(/\n/g, '\r\n'),
      unsorted: serializeIndex({ 'web/b': { pod } }).replace(
        '{\n',
        `{\n  "web/c": {\n    "pod": "${pod}"\n  },\n`,
      ),
      duplicate: canonical.replace('"web/b"', '"web/a"'),
      'pod of another NodeGroup': canonical.replace(pod, other),
      'unknown field': canonical.replace(`"${pod}"\n`, `"${pod}",\n    "extra": "x"\n`),
      'escaped key': canonical.replace('"web/a"', '"web\\/a"'),
      'upper-case label': canonical.replace('"web/a"', '"web/A"'),
      'trailing garbage': canonical + ' ',
      'two Services one identity': serializeIndex({
        'web/a': { pod, service: servicePayloadKey('default', 'web', '1') },
        'web/b': { pod, service: servicePayloadKey('default', 'web', '2') },
      }),
      'not JSON': '{\n  "web/a": {\n',
    };
    for (const [name, text] of Object.entries(cases)) {
      expect([name, editCanonicalIndex(text, 'web/z', { pod })]).toEqual([name, undefined]);
    }
  });

  it('refuses an entry the index cannot hold, and a Service another deployment owns', () => {
    const pod = podPayloadKey('web', 'p');
    const text = serializeIndex({
      'web/a': { pod, service: servicePayloadKey('default', 'web', '1') },
    });
    // A Pod payload of another NodeGroup: the parsed path decides (it writes what it is given).
    expect(editCanonicalIndex(text, 'api/b', { pod })).toBeUndefined();
    expect(() =>
      editCanonicalIndex(text, 'web/b', { pod, service: servicePayloadKey('default', 'web', '2') }),
    ).toThrow(ServiceOwnedError);
    // The owner itself may change its Service payload.
    const moved = editCanonicalIndex(text, 'web/a', {
      pod,
      service: servicePayloadKey('default', 'web', '2'),
    });
    expect(moved?.text).toContain(servicePayloadKey('default', 'web', '2'));
  });
});
