import path from 'node:path';
import { describeUnless } from '@podmin/testing';
import { TestRunNetwork } from '../__fixtures__/test-run-network';
import { possibleCpus, statCounters } from '../dataplane';
import {
  FLOW_FLAGS,
  IPPROTO,
  MAPS,
  PROGRAM,
  SNAT_PORTS,
  TCX,
  addressBytes,
  backendKey,
  backendValue,
  configValue,
  flowKey,
  reverseFlowValue,
  indexKey,
  serviceKey,
  serviceValue,
  vipValue,
  type StatName,
} from '../maps/layout';
import { IPPROTO_ICMPV6, TCP_FLAGS, decodeFrame, ipv6Frame, l4ChecksumValid } from './frames';
import type { BpfMap } from './bpf-map';
import { BpfObject, type TestRunResult } from './bpf-object';
import { inNetworkNamespace } from './netns';

// The committed program on crafted IPv6 frames through BPF_PROG_TEST_RUN: what each path
// writes into the packet (addresses, ports, MACs), that the L4 checksum is still valid, the
// verdict, and what it records in its maps and counters. It runs in a namespace whose FIB
// routes everything to one gateway with a permanent neighbour, so a forward is a redirect with
// known MAC addresses.

const objectPath = path.resolve(__dirname, '../../../../../bpf/obj/service_lb.o');
const NODE = 'fd00:10::1';
const VIP = 'fd50:6f64:6d69::1';
const CLIENT = 'fd00:1:2:3:4::10';
const BACKEND = 'fd00:1:2:3:4::20';
const CROWDED = 'fd00:1:2:3:4::30'; // the backend whose SNAT ports are all taken
const OTHER = 'fd00:99::1';
const TCP = IPPROTO.TCP;
const UDP = IPPROTO.UDP;
const PORTS = {
  web: 80, // → BACKEND:8080
  dns: 53, // UDP → BACKEND:5353
  emptyTcp: 81, // a Service with no ready backend
  emptyUdp: 54,
  crowded: 90, // → CROWDED:9090
};

describeUnless(TestRunNetwork.usable(), 'bpf-test-run')(
  'the dataplane program under BPF_PROG_TEST_RUN',
  () => {
    let net: TestRunNetwork;
    let obj: BpfObject;
    let rev: BpfMap;
    let fwd: BpfMap;
    let stats: BpfMap;
    const run = (frame: Buffer): TestRunResult =>
      inNetworkNamespace(net.ns, () => obj.testRun(frame, { ifindex: net.ingressIfindex }));
    /** Runs `frame` and returns the result with the counters that changed. */
    const runCounting = (frame: Buffer) => {
      const before = statCounters(stats);
      const r = run(frame);
      const after = statCounters(stats);
      const delta: Partial<Record<StatName, number>> = {};
      for (const k of Object.keys(after) as StatName[])
        if (after[k] !== before[k]) delta[k] = after[k] - before[k];
      return { ...r, delta, out: decodeFrame(r.frame) };
    };

    beforeAll(() => {
      net = TestRunNetwork.create(`pdtr${process.pid % 100000}`);
      obj = BpfObject.load(objectPath, PROGRAM);
      const m = (spec: { name: string; key: number; value: number }) =>
        obj.map(spec.name, spec.key, spec.value);
      m(MAPS.config).update(indexKey(0), configValue(NODE));
      m(MAPS.vips).update(addressBytes(VIP), vipValue(5));
      const services = m(MAPS.services);
      const backends = m(MAPS.backends);
      const service = (port: number, proto: number, id: number, to?: [string, number]) => {
        if (to) backends.update(backendKey(id, 0), backendValue(to[0], to[1]));
        services.update(serviceKey(VIP, port, proto), serviceValue(id, to ? 1 : 0));
      };
      service(PORTS.web, TCP, 1, [BACKEND, 8080]);
      service(PORTS.dns, UDP, 2, [BACKEND, 5353]);
      service(PORTS.emptyTcp, TCP, 3);
      service(PORTS.emptyUdp, UDP, 4);
      service(PORTS.crowded, TCP, 5, [CROWDED, 9090]);
      rev = m(MAPS.revFlows);
      fwd = m(MAPS.fwdFlows);
      stats = obj.map(MAPS.stats.name, MAPS.stats.key, MAPS.stats.value * possibleCpus());
    });
    afterAll(() => {
      obj?.close();
      net?.destroy();
    });

    /** Expects a forwarded packet: redirected out of the gateway's veth with its MACs. */
    const expectForwarded = (r: ReturnType<typeof runCounting>) => {
      expect(r.verdict).toBe(TCX.REDIRECT);
      expect(r.out.dstMac).toBe(TestRunNetwork.GATEWAY_MAC);
      expect(r.out.srcMac).toBe(net.egressMac);
      expect(l4ChecksumValid(r.frame)).toBe(true);
    };

    describe('a TCP flow', () => {
      let snatPort = 0;
      const syn = ipv6Frame({
        src: CLIENT,
        dst: VIP,
        proto: TCP,
        sport: 40000,
        dport: PORTS.web,
        seq: 7,
        payload: Buffer.from('syn'),
      });

      it('new: source-NATs to the node, DNATs to the backend, and remembers the flow both ways', () => {
        const r = runCounting(syn);
        expectForwarded(r);
        expect(r.out).toMatchObject({ src: NODE, dst: BACKEND, dport: 8080, proto: TCP });
        expect(r.out.tcpFlags).toBe(TCP_FLAGS.SYN);
        expect(r.out.seq).toBe(7);
        expect(r.frame.subarray(-3).toString()).toBe('syn');
        expect(r.out.sport).toBeGreaterThanOrEqual(SNAT_PORTS.min);
        expect(r.out.sport).toBeLessThan(SNAT_PORTS.min + SNAT_PORTS.count);
        expect(r.delta).toEqual({ newFlow: 1, forward: 1 });
        snatPort = r.out.sport;
        expect(fwd.keys()).toHaveLength(1);
        expect(rev.keys()).toHaveLength(1);
      });

      it('known: the same rewrite, from the flow maps and the cached route', () => {
        const r = runCounting(
          ipv6Frame({
            src: CLIENT,
            dst: VIP,
            proto: TCP,
            sport: 40000,
            dport: PORTS.web,
            tcpFlags: TCP_FLAGS.ACK | TCP_FLAGS.PSH,
            seq: 8,
            ack: 99,
            payload: Buffer.from('GET / HTTP/1.1\r\n\r\n'),
          }),
        );
        expectForwarded(r);
        expect(r.out).toMatchObject({ src: NODE, dst: BACKEND, sport: snatPort, dport: 8080 });
        expect(r.out.tcpFlags).toBe(TCP_FLAGS.ACK | TCP_FLAGS.PSH);
        expect(r.delta).toEqual({ forward: 1 });
      });

      it('a retransmitted SYN stays on its flow', () => {
        const r = runCounting(syn);
        expectForwarded(r);
        expect(r.out.sport).toBe(snatPort);
        expect(r.delta).toEqual({ forward: 1 });
      });

      it('reply: restores the VIP and port the client called', () => {
        const r = runCounting(
          ipv6Frame({
            src: BACKEND,
            dst: NODE,
            proto: TCP,
            sport: 8080,
            dport: snatPort,
            tcpFlags: TCP_FLAGS.SYN | TCP_FLAGS.ACK,
            seq: 500,
            ack: 8,
            payload: Buffer.from('HTTP/1.1 200 OK\r\n'),
          }),
        );
        expectForwarded(r);
        expect(r.out).toMatchObject({ src: VIP, dst: CLIENT, sport: PORTS.web, dport: 40000 });
        expect(r.out.ack).toBe(8);
        expect(r.delta).toEqual({ reverse: 1 });
      });

      it('a segment of a flow the node does not know is refused with a reset', () => {
        const r = runCounting(
          ipv6Frame({
            src: CLIENT,
            dst: VIP,
            proto: TCP,
            sport: 40001,
            dport: PORTS.web,
            tcpFlags: TCP_FLAGS.ACK,
            seq: 10,
            ack: 12345,
          }),
        );
        expect(r.verdict).toBe(TCX.REDIRECT);
        expect(r.out).toMatchObject({ src: VIP, dst: CLIENT, sport: PORTS.web, dport: 40001 });
        expect(r.out.tcpFlags).toBe(TCP_FLAGS.RST);
        expect(r.out.seq).toBe(12345);
        expect(l4ChecksumValid(r.frame)).toBe(true);
        expect(r.delta).toEqual({ reject: 1 });
      });
    });

    it('a UDP flow: new, then the reply', () => {
      const q = runCounting(
        ipv6Frame({
          src: CLIENT,
          dst: VIP,
          proto: UDP,
          sport: 5000,
          dport: PORTS.dns,
          payload: Buffer.from('question'),
        }),
      );
      expectForwarded(q);
      expect(q.out).toMatchObject({ src: NODE, dst: BACKEND, dport: 5353, proto: UDP });
      expect(q.out.sport).toBeGreaterThanOrEqual(SNAT_PORTS.min);
      expect(q.frame.subarray(-8).toString()).toBe('question');
      expect(q.delta).toEqual({ newFlow: 1, forward: 1 });
      const a = runCounting(
        ipv6Frame({
          src: BACKEND,
          dst: NODE,
          proto: UDP,
          sport: 5353,
          dport: q.out.sport,
          payload: Buffer.from('answer!'),
        }),
      );
      expectForwarded(a);
      expect(a.out).toMatchObject({ src: VIP, dst: CLIENT, sport: PORTS.dns, dport: 5000 });
      expect(a.delta).toEqual({ reverse: 1 });
    });

    it('no backend, TCP: the SYN is answered with a reset from the VIP, back out where it came in', () => {
      const r = runCounting(
        ipv6Frame({
          src: CLIENT,
          dst: VIP,
          proto: TCP,
          sport: 41000,
          dport: PORTS.emptyTcp,
          seq: 1000,
          srcMac: Buffer.from([2, 0, 0, 0, 0, 0x11]),
          dstMac: Buffer.from([2, 0, 0, 0, 0, 0x22]),
        }),
      );
      expect(r.verdict).toBe(TCX.REDIRECT);
      expect(r.out).toMatchObject({
        src: VIP,
        dst: CLIENT,
        sport: PORTS.emptyTcp,
        dport: 41000,
        srcMac: '02:00:00:00:00:22',
        dstMac: '02:00:00:00:00:11',
        payloadLength: 20,
      });
      expect(r.out.tcpFlags).toBe(TCP_FLAGS.RST | TCP_FLAGS.ACK);
      expect(r.out.ack).toBe(1001);
      expect(r.frame).toHaveLength(14 + 40 + 20);
      expect(l4ChecksumValid(r.frame)).toBe(true);
      expect(r.delta).toEqual({ reject: 1 });
    });

    it('no backend, UDP: ICMPv6 port unreachable quoting the datagram', () => {
      const datagram = ipv6Frame({
        src: CLIENT,
        dst: VIP,
        proto: UDP,
        sport: 6000,
        dport: PORTS.emptyUdp,
        payload: Buffer.from('abcdefgh'),
      });
      const r = runCounting(datagram);
      expect(r.verdict).toBe(TCX.REDIRECT);
      expect(r.out).toMatchObject({
        src: VIP,
        dst: CLIENT,
        proto: IPPROTO_ICMPV6,
        icmpType: 1,
        icmpCode: 4,
      });
      // The quote: the offending IPv6 header and the first 8 bytes after it (the UDP header).
      expect(r.frame.subarray(14 + 40 + 8)).toEqual(datagram.subarray(14, 14 + 48));
      expect(l4ChecksumValid(r.frame)).toBe(true);
      expect(r.delta).toEqual({ reject: 1 });
    });

    it('passes anything not to a VIP or a SNAT port untouched, and drops what it cannot parse to a VIP', () => {
      const other = ipv6Frame({ src: CLIENT, dst: OTHER, proto: TCP, sport: 1, dport: 2 });
      const r = runCounting(other);
      expect(r.verdict).toBe(TCX.NEXT);
      expect(r.frame).toEqual(other);
      expect(r.delta).toEqual({});
      const toNodeUnknown = ipv6Frame({ src: BACKEND, dst: NODE, proto: UDP, sport: 1, dport: 2 });
      expect(runCounting(toNodeUnknown).verdict).toBe(TCX.NEXT);
      const icmp = ipv6Frame({ src: CLIENT, dst: VIP, proto: UDP, sport: 1, dport: 2 });
      icmp.writeUInt8(IPPROTO_ICMPV6, 14 + 6);
      const d = runCounting(icmp);
      expect(d.verdict).toBe(TCX.DROP);
      expect(d.delta).toEqual({ dropUnparsed: 1 });
    });

    describe('SNAT port exhaustion', () => {
      const nowNs = () => process.hrtime.bigint(); // CLOCK_MONOTONIC, as bpf_ktime_get_ns
      /** Fills every SNAT port of CROWDED:9090 with another client's flow seen at `seen`. */
      const fill = (seen: bigint, flags: number) => {
        for (let i = 0; i < SNAT_PORTS.count; i++) {
          const key = flowKey(CROWDED, NODE, 9090, SNAT_PORTS.min + i, TCP);
          const value = reverseFlowValue({
            client: OTHER,
            clientPort: 50000,
            vip: VIP,
            vipPort: PORTS.crowded,
            flags,
            seenNs: seen,
          });
          rev.update(key, value);
        }
      };
      const syn = ipv6Frame({
        src: CLIENT,
        dst: VIP,
        proto: TCP,
        sport: 42000,
        dport: PORTS.crowded,
      });

      it('drops a new flow when every probed port is in use', () => {
        fill(nowNs(), 0);
        const r = runCounting(syn);
        expect(r.verdict).toBe(TCX.DROP);
        expect(r.frame).toEqual(syn);
        expect(r.delta).toEqual({ snatExhausted: 1 });
      });

      it('takes over a port whose flow was reset long enough ago', () => {
        fill(nowNs() - 1_000_000_000n, FLOW_FLAGS.RST);
        const r = runCounting(syn);
        expectForwarded(r);
        expect(r.out).toMatchObject({ src: NODE, dst: CROWDED, dport: 9090 });
        expect(r.delta).toEqual({ portReused: 1, newFlow: 1, forward: 1 });
        const key = flowKey(CROWDED, NODE, 9090, r.out.sport, TCP);
        const taken = rev.lookup(key);
        expect(taken?.subarray(0, 16)).toEqual(addressBytes(CLIENT));
        expect(taken?.readUInt16BE(32)).toBe(42000);
      });
    });
  },
);
