import fs from 'node:fs';
import { DataplaneError } from '../dataplane-error';
import type { MapLayout } from '../maps/layout';
import { LibbpfCallError, libbpf } from './libbpf';

// The map contract (DESIGN §6 item 32): the maps bpf/src/service_lb.c declares must be the ones
// maps/layout.ts describes, checked through libbpf on the opened object before anything loads.

/** libbpf's map type by number, for messages (enum bpf_map_type). */
function typeName(type: number): string {
  const names: Record<number, string> = { 1: 'hash', 2: 'array', 6: 'percpu_array', 9: 'lru_hash' };
  return names[type] ?? `type ${type}`;
}

/**
 * Compares the maps an opened (not yet loaded) object declares with the layouts user space
 * writes: every layout's map must exist with the same type, key size, value size and bound, and
 * the object must have no map the layouts do not describe. Throws naming the map and both values.
 */
export function checkMapContract(
  file: string,
  handle: unknown,
  layouts: readonly MapLayout[],
): void {
  const lib = libbpf();
  const declared = new Map<string, unknown>();
  for (let m = lib.nextMap(handle, null); m; m = lib.nextMap(handle, m))
    declared.set(lib.mapName(m), m);
  const problems: string[] = [];
  for (const want of layouts) {
    const m = declared.get(want.name);
    declared.delete(want.name);
    if (!m) {
      problems.push(`map ${want.name} is missing from the object`);
      continue;
    }
    const have = {
      type: lib.mapType(m),
      key: lib.mapKeySize(m),
      value: lib.mapValueSize(m),
      maxEntries: lib.mapMaxEntries(m),
    };
    if (have.type !== want.type)
      problems.push(
        `map ${want.name} is a ${typeName(have.type)} map in the object, ${typeName(want.type)} in layout.ts`,
      );
    for (const [field, what] of [
      ['key', 'key size'],
      ['value', 'value size'],
      ['maxEntries', 'max entries'],
    ] as const) {
      if (have[field] !== want[field])
        problems.push(
          `map ${want.name} ${what} is ${have[field]} in the object, ${want[field]} in layout.ts`,
        );
    }
  }
  for (const name of declared.keys())
    problems.push(`map ${name} is in the object but not in layout.ts`);
  if (problems.length > 0)
    throw new DataplaneError(
      'INTERNAL',
      `eBPF object ${file} does not match libs/agent/feature-dataplane/src/maps/layout.ts: ${problems.join('; ')}`,
    );
}

/**
 * Opens `file` (an opened object is not loaded: no privilege needed) and checks its maps against
 * `layouts`; returns libbpf's object handle, which the caller closes. Closes it and throws on a
 * mismatch.
 */
export function openCheckedObject(file: string, layouts: readonly MapLayout[]): unknown {
  if (!fs.existsSync(file))
    throw new DataplaneError('NOT_FOUND', `eBPF object ${file} does not exist`);
  const lib = libbpf();
  const handle = lib.openFile(file, null);
  if (!handle) throw new LibbpfCallError(`open ${file}`, -lib.getError(handle));
  try {
    checkMapContract(file, handle, layouts);
  } catch (err) {
    lib.close(handle);
    throw err;
  }
  return handle;
}
