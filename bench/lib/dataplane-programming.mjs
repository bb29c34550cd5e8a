// Map programming in the bench's own process (bench/dataplane.mjs part 3): the object loaded
// with fresh maps, then MapProgrammer.program of every Service, `runs` times.
import { onCleanup } from './bench.mjs';

const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

/**
 * Loads `objectPath` and programs `services` into its fresh maps, `runs` times; after the last,
 * programs `changed` over them (a second snapshot). Returns each run's load time, programming
 * time and this process's CPU time over it (ms), the entries written, and the second snapshot's
 * result with its time.
 */
export function programMaps(lib, { objectPath, services, runs, changed }) {
  const objectLoadMs = [];
  const programMs = [];
  const programCpuMs = []; // this process's CPU time: on a busy machine, less than the wall time
  let written = 0;
  let second;
  for (let i = 0; i < runs; i++) {
    const t0 = nowMs();
    const object = lib.BpfObject.load(objectPath, lib.PROGRAM);
    const unregister = onCleanup(() => object.close());
    try {
      const t1 = nowMs();
      const m = (spec) => object.map(spec.name, spec.key, spec.value);
      const maps = {
        vips: m(lib.MAPS.vips),
        services: m(lib.MAPS.services),
        backends: m(lib.MAPS.backends),
      };
      const programmer = new lib.MapProgrammer(maps);
      const t2 = nowMs();
      const cpu = process.cpuUsage();
      const done = programmer.program(services);
      const t3 = nowMs();
      const used = process.cpuUsage(cpu);
      objectLoadMs.push(t1 - t0);
      programMs.push(t3 - t2);
      programCpuMs.push((used.user + used.system) / 1000);
      written = done.updated;
      const probeKey = lib.serviceKey(services.at(-1).vip, 80, lib.IPPROTO.TCP);
      const backends = services.reduce((n, s) => n + s.backends.length, 0);
      if (done.backends !== backends || maps.services.lookup(probeKey) === undefined)
        throw new Error(`programming wrote ${JSON.stringify(done)}`);
      if (i === runs - 1) {
        const t4 = nowMs();
        const r = programmer.program(changed);
        second = { ...r, ms: nowMs() - t4 };
      }
    } finally {
      object.close();
      unregister();
    }
  }
  return { objectLoadMs, programMs, programCpuMs, written, second };
}
