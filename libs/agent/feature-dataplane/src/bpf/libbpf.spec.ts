import fs from 'node:fs';
import path from 'node:path';
import koffi from 'koffi';
import { describeUnless } from '@podmin/testing';
import { MAPS, PROGRAM, type MapLayout } from '../maps/layout';
import { BpfObject } from './bpf-object';

// The contract between layout.ts and the committed object: the object's own map definitions
// (read by libbpf from the opened object) must match the sizes and bounds user space writes
// with, or loading fails naming the map. Opening an object needs no privilege, only libbpf.

const objectPath = path.resolve(__dirname, '../../../../../bpf/obj/service_lb.o');
const layouts = (change: Partial<Record<keyof typeof MAPS, Partial<MapLayout>>>): MapLayout[] =>
  (Object.keys(MAPS) as (keyof typeof MAPS)[]).map((k) => ({ ...MAPS[k], ...change[k] }));

function libbpfMissing(): string | undefined {
  try {
    koffi.load('libbpf.so.1');
    return undefined;
  } catch {
    return 'libbpf.so.1 is not installed (Debian: libbpf1)';
  }
}

describeUnless(libbpfMissing(), 'bpf-map-contract')('the eBPF map contract', () => {
  it('layout.ts matches every map of the committed object', () => {
    expect(() => BpfObject.checkMaps(objectPath)).not.toThrow();
  });

  it('a wrong value size fails the load, naming the map and both sizes', () => {
    const wrong = layouts({ revFlows: { value: 64 } });
    expect(() => BpfObject.load(objectPath, PROGRAM, wrong)).toThrow(
      /map podmin_rev_flows value size is 72 in the object, 64 in layout\.ts/,
    );
  });

  it('names every disagreement: key size, bound, type, a missing and an unknown map', () => {
    const wrong = layouts({
      services: { key: 24 },
      fwdFlows: { maxEntries: 1024 },
      stats: { type: 2 },
      config: { name: 'podmin_settings' },
    });
    let message = '';
    try {
      BpfObject.checkMaps(objectPath, wrong);
    } catch (err) {
      message = err instanceof Error ? err.message : String(err);
    }
    expect(message).toContain('map podmin_services key size is 20 in the object, 24 in layout.ts');
    expect(message).toContain(
      'map podmin_fwd_flows max entries is 262144 in the object, 1024 in layout.ts',
    );
    expect(message).toContain(
      'map podmin_stats is a percpu_array map in the object, array in layout.ts',
    );
    expect(message).toContain('map podmin_settings is missing from the object');
    expect(message).toContain('map podmin_config is in the object but not in layout.ts');
  });
});

describe("the program's licence", () => {
  const source = fs.readFileSync(
    path.resolve(__dirname, '../../../../../bpf/src/service_lb.c'),
    'utf8',
  );
  const spdx = /^\/\/ SPDX-License-Identifier: (.+)$/m.exec(source)?.[1];
  const declared = /SEC\("license"\) = "([^"]+)";/.exec(source)?.[1];

  it('declares to the kernel the licence its SPDX line gives', () => {
    // The kernel's name (include/linux/license.h) of each SPDX expression podmin may use.
    const kernelName: Record<string, string> = {
      '(GPL-2.0-only OR BSD-2-Clause)': 'Dual BSD/GPL',
      'GPL-2.0-only': 'GPL v2',
    };
    expect(spdx).toBeDefined();
    expect(kernelName[spdx ?? '']).toBe(declared);
  });

  it('is GPL-compatible, as bpf_fib_lookup (a GPL-only helper) requires, and is what the object carries', () => {
    const gplCompatible = [
      'GPL',
      'GPL v2',
      'GPL and additional rights',
      'Dual BSD/GPL',
      'Dual MIT/GPL',
      'Dual MPL/GPL',
    ];
    expect(source).toContain('bpf_fib_lookup(');
    expect(gplCompatible).toContain(declared);
    expect(fs.readFileSync(objectPath).includes(Buffer.from(`${declared ?? ''}\0`))).toBe(true);
  });
});
