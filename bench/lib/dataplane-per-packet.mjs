// Per-packet cost of the dataplane program under BPF_PROG_TEST_RUN (bench/dataplane.mjs part
// 1). A run rewrites the packet in place and the next run of the same `repeat` sees the
// rewritten bytes, so a repeated packet stays on one path only if its rewrite leads back to a
// packet of the same path. The maps are programmed so it does:
//   known forward  two flows from the node address to two VIPs whose "backends" are each other:
//                  (N:p1 → V1:80) becomes (N:p2 → V2:80), which becomes (N:p1 → V1:80) again.
//                  Every run is a known flow's packet: both flow-map lookups, the rewrite with
//                  its checksum fixes, the cached route, the redirect.
//   reply          two reverse entries whose VIPs are each other's backends: (X1:80 → N:q1)
//                  becomes (X2:80 → N:q2) and back.
//   pass-through   a packet to an address that is neither a VIP nor the node: never rewritten.
// The program's counters prove it (forward, reverse, no new flow). A new flow cannot repeat:
// its first run creates the flow, so each new flow is its own frame, run once (many calls),
// and what a one-run call adds (the kernel's timer reads) is taken off: the pass-through
// frame's one-run time minus its time at `repeat`.
// Runs in a namespace whose FIB routes everything to a gateway with a permanent neighbour
// (TestRunNetwork), so bpf_fib_lookup succeeds as on a node.

const NODE = 'fd00:10::1';
const V1 = 'fd50:6f64:6d69::1';
const V2 = 'fd50:6f64:6d69::2';
const V3 = 'fd50:6f64:6d69::3';
const X1 = 'fd00:1:2:3:4::20';
const X2 = 'fd00:1:2:3:4::21';
const OTHER = 'fd00:99::1';

/**
 * Measures the four per-packet costs; returns ns per run (median of `rounds`) and what each
 * figure is made of. `register(fn)` receives cleanups.
 */
export function perPacket(lib, { objectPath, tag, repeat, rounds, newFlows, register }) {
  const TCP = lib.IPPROTO.TCP;
  const net = lib.TestRunNetwork.create(`${tag}-tr`);
  register(() => net.destroy());
  const obj = lib.BpfObject.load(objectPath, lib.PROGRAM);
  register(() => obj.close());
  const m = (spec) => obj.map(spec.name, spec.key, spec.value);
  const { MAPS } = lib;
  m(MAPS.config).update(lib.indexKey(0), lib.configValue(NODE));
  const vips = m(MAPS.vips);
  for (const v of [V1, V2, V3]) vips.update(lib.addressBytes(v), lib.vipValue(1));
  const fwd = m(MAPS.fwdFlows);
  const rev = m(MAPS.revFlows);
  const stats = obj.map(MAPS.stats.name, MAPS.stats.key, MAPS.stats.value * lib.possibleCpus());
  const now = process.hrtime.bigint();
  const flowState = { flags: 0, seenNs: now };

  /** The reply entry of a packet from `from`:80 to NODE:`port`, answered as `vip`:80 to `clientPort`. */
  const reverse = (from, port, vip, clientPort) =>
    rev.update(
      lib.flowKey(from, NODE, 80, port, TCP),
      lib.reverseFlowValue({ client: NODE, clientPort, vip, vipPort: 80, ...flowState }),
    );
  // Known forward: the two-flow cycle.
  const [p1, p2] = [30001, 30002];
  fwd.update(lib.flowKey(NODE, V1, p1, 80, TCP), lib.forwardFlowValue(V2, 80, p2));
  fwd.update(lib.flowKey(NODE, V2, p2, 80, TCP), lib.forwardFlowValue(V1, 80, p1));
  reverse(V2, p2, V1, p1);
  reverse(V1, p1, V2, p2);
  // Reply: the two-entry cycle.
  const [q1, q2] = [31001, 31002];
  reverse(X1, q1, X2, q2);
  reverse(X2, q2, X1, q1);
  // New flows: a Service at V3:80 with 1,000 backends, so the SNAT ports of each backend stay
  // nearly all free (a node's common case) however many flows are opened.
  const BACKENDS = 1000;
  const backends = m(MAPS.backends);
  for (let i = 0; i < BACKENDS; i++)
    backends.update(
      lib.backendKey(7, i),
      lib.backendValue(`fd00:2::${(i + 1).toString(16)}`, 8080),
    );
  m(MAPS.services).update(lib.serviceKey(V3, 80, TCP), lib.serviceValue(7, BACKENDS));

  const payload = Buffer.alloc(10, 0x61);
  const ack = lib.TCP_FLAGS.ACK | lib.TCP_FLAGS.PSH;
  const frames = {
    knownForward: lib.ipv6Frame({
      src: NODE,
      dst: V1,
      proto: TCP,
      sport: p1,
      dport: 80,
      tcpFlags: ack,
      payload,
    }),
    reply: lib.ipv6Frame({
      src: X1,
      dst: NODE,
      proto: TCP,
      sport: 80,
      dport: q1,
      tcpFlags: ack,
      payload,
    }),
    passThrough: lib.ipv6Frame({
      src: X1,
      dst: OTHER,
      proto: TCP,
      sport: 80,
      dport: 1234,
      tcpFlags: ack,
      payload,
    }),
  };
  const counters = () => lib.statCounters(stats);
  const inNs = (fn) => lib.inNetworkNamespace(net.ns, fn);
  const run = (frame, n) =>
    inNs(() => obj.testRun(frame, { repeat: n, ifindex: net.ingressIfindex }));

  const expectations = {
    knownForward: { verdict: lib.TCX.REDIRECT, counter: 'forward' },
    reply: { verdict: lib.TCX.REDIRECT, counter: 'reverse' },
    passThrough: { verdict: lib.TCX.NEXT, counter: undefined },
  };
  const ns = { knownForward: [], reply: [], passThrough: [] };
  // One warm-up run each (the first forward and reply look their route up and cache it).
  for (const f of Object.values(frames)) run(f, 1);
  for (let round = 0; round < rounds; round++) {
    for (const [what, frame] of Object.entries(frames)) {
      const before = counters();
      const r = run(frame, repeat);
      const after = counters();
      const want = expectations[what];
      if (r.verdict !== want.verdict)
        throw new Error(`${what}: verdict ${r.verdict}, expected ${want.verdict}`);
      const changed = Object.keys(after).filter((k) => after[k] !== before[k]);
      const expected = want.counter ? [want.counter] : [];
      if (
        changed.join() !== expected.join() ||
        (want.counter && after[want.counter] - before[want.counter] !== repeat)
      )
        throw new Error(
          `${what}: counters changed ${JSON.stringify(changed.map((k) => [k, after[k] - before[k]]))}, expected ${repeat} × ${want.counter ?? 'none'}`,
        );
      ns[what].push(r.durationNs);
    }
  }

  // New flows, one frame each; and the pass-through frame run once as often, for the overhead.
  const newFlowFrames = Array.from({ length: newFlows }, (_, i) =>
    lib.ipv6Frame({
      src: `fd00:3::${((i >> 14) + 1).toString(16)}`,
      dst: V3,
      proto: TCP,
      sport: 10000 + (i & 0x3fff),
      dport: 80,
      tcpFlags: lib.TCP_FLAGS.SYN,
    }),
  );
  const before = counters();
  const once = { newFlow: [], passThrough: [] };
  inNs(() => {
    for (const f of newFlowFrames) {
      const r = obj.testRun(f, { ifindex: net.ingressIfindex });
      if (r.verdict !== lib.TCX.REDIRECT) throw new Error(`new flow: verdict ${r.verdict}`);
      once.newFlow.push(r.durationNs);
      once.passThrough.push(
        obj.testRun(frames.passThrough, { ifindex: net.ingressIfindex }).durationNs,
      );
    }
  });
  const after = counters();
  if (after.newFlow - before.newFlow !== newFlows || after.snatExhausted !== before.snatExhausted)
    throw new Error(
      `new flows: ${after.newFlow - before.newFlow} of ${newFlows} opened, ${after.snatExhausted - before.snatExhausted} exhausted`,
    );
  const median = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    const mid = Math.floor(s.length / 2);
    return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
  };
  const overhead = Math.max(0, median(once.passThrough) - median(ns.passThrough));
  return {
    knownForward: ns.knownForward,
    reply: ns.reply,
    passThrough: ns.passThrough,
    newFlow: median(once.newFlow) - overhead,
    newFlowRaw: median(once.newFlow),
    overhead,
    median,
  };
}
