import fs from 'node:fs';
import path from 'node:path';
import { BpfObject } from './bpf-object';
import { MAPS, PROGRAM } from '../maps/layout';
import { describeIfRoot } from '@podmin/testing';

// Every committed eBPF object goes through this kernel's verifier (libbpf loads it for real)
// and declares the maps the user-space layouts expect, with their bounds.
const objDir = path.resolve(__dirname, '../../../../../bpf/obj');
const objects = fs.readdirSync(objDir).filter((n) => n.endsWith('.o'));

describeIfRoot('integration:bpf-verifier', 'loading eBPF programs')(
  'the committed eBPF objects on this kernel',
  () => {
    it('has objects to check', () => {
      expect(objects).toContain('service_lb.o');
    });

    it.each(objects)('%s loads through the verifier with every map the layouts name', (name) => {
      const obj = BpfObject.load(path.join(objDir, name), PROGRAM);
      try {
        for (const spec of Object.values(MAPS)) {
          const map = obj.map(spec.name, spec.key, spec.value);
          expect(map.name).toBe(spec.name);
        }
        // An empty hash map iterates to nothing; a wrong key size would fail the call.
        expect(obj.map(MAPS.vips.name, MAPS.vips.key, MAPS.vips.value).keys()).toEqual([]);
      } finally {
        obj.close();
      }
    });
  },
);
