#!/usr/bin/env node
// Budgets (DESIGN.md §8, issue 14), measured in one run:
//   1. iperf3 TCP throughput through a Service VIP ≥ 0.95× straight to the backend address;
//   2. short TCP connections per second through the VIP with 10,000 Services programmed ≥ an
//      ip6tables DNAT equivalent of the same 10,000 Services in kube-proxy-style chains;
//   3. programming the maps for 10,000 Services × 3 backends ≤ 1 s.
//
// The network is the dataplane integration test's (libs/agent/feature-dataplane/src/__fixtures__/
// pod-network.ts): a node namespace and Pod namespaces wired the way ptp CNI wires them, the
// node address on the node's lo. The eBPF side is the real agent-dataplane, bundled fresh by
// tools/scripts/bundle.mjs and started with the supervisor's settings for it, in the node
// namespace, following snapshots from a real Coordinator gRPC server (TestCoordinator). Clients
// and servers are the C workload in __fixtures__/flows.c; iperf3 measures throughput.
//
// 1. One iperf3 server in backend Pod web-a; the client Pod runs iperf3 to web-a's address
//    (routed by the node namespace's kernel) and to the VIP of Service `iperf` (5201 → 5201,
//    backend web-a), which carries both of iperf3's connections (control and data). The
//    snapshot holds the 10,000 Services of part 2 as well. Measured once agent-dataplane is idle
//    and after one discarded run each way; rounds alternate which goes first.
// 2. Each of 10,000 Services (port 80 → 8080) has the same three backend Pods, so only three
//    backend namespaces exist. The VIP path: the snapshot through the coordinator, agent-
//    dataplane attached, no ip6tables rules. The ip6tables path, in the same node namespace:
//    an empty snapshot (agent-dataplane detaches and frees its program), then one
//    ip6tables-restore of the nat table kube-proxy would write: PREROUTING → KUBE-SERVICES,
//    one `-d VIP -p tcp --dport 80 -j KUBE-SVC-n` rule per Service; KUBE-SVC-n marks for
//    masquerade (every source, as our dataplane source-NATs every flow) and picks one of three
//    KUBE-SEP chains with `-m statistic --mode random`; KUBE-SEP DNATs to [backend]:8080;
//    POSTROUTING source-NATs marked packets to the node address (--random-fully, as kube-proxy
//    masquerades). The table is deleted again before the next VIP round. Measured: the Service
//    whose rule is LAST in KUBE-SERVICES (the budget) and the one in the middle (reference), by
//    `flows tcp VIP 80 COUNT 4` (connections close with a reset). Rounds alternate.
// 3. In this process: BpfObject.load of bpf/obj/service_lb.o (fresh maps) and MapProgrammer
//    .program of the 10,000 Services × 3 backends (1 TCP port each), median of a few runs, then
//    a second snapshot that replaces one backend of one Service.
//
// Needs root, iperf3, ip6tables(-restore), gcc and libbpf1 (tools/setup/apt-deps.sh). Without
// root or a tool it prints `SKIPPED bench dataplane: <reason>` and exits 0. Exits 1 when a
// budget line says OVER BUDGET, 2 when the run itself failed. Every namespace, process and
// ip6tables rule it made goes at the end, on failure and on SIGINT/SIGTERM/SIGHUP too.
//   node bench/dataplane.mjs [--quick]      (--quick: one round, 2 s iperf3 runs, fewer flows)
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bundleLibraries } from './lib/bundle-libraries.mjs';

const root = path.resolve(import.meta.dirname, '..');
const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 1 : 5;
const IPERF_SECONDS = quick ? 2 : 5;
const CONNECTIONS = quick ? 2_000 : 20_000;
const PROCS = 4;
const PROGRAM_RUNS = quick ? 1 : 5;
const SERVICES = 10_000;
const MIDDLE = SERVICES / 2; // its KUBE-SERVICES rule is number 5,001
const LAST = SERVICES - 1;
const CLUSTER = 'bench';
const NODE = 'fd00:10::1';
const PREFIX = 'fd00:1:2:3:4'; // localAgentArgs' Pod prefix: the dataplane attaches to its /128s
const CLIENT = `${PREFIX}::10`;
const BACKENDS = { 'web-a': `${PREFIX}::20`, 'web-b': `${PREFIX}::21`, 'web-c': `${PREFIX}::22` };
const TAG = `db${process.pid % 100000}`; // names this run's namespaces and veths
const SPARE = `${PREFIX}::23`; // the replacement backend of part 3's second snapshot

function skip(reason) {
  console.log(`SKIPPED bench dataplane: ${reason}`);
  process.exit(0);
}
if (process.getuid?.() !== 0) skip('needs root (network namespaces, eBPF, ip6tables)');
for (const tool of ['iperf3', 'ip6tables', 'ip6tables-restore', 'gcc', 'ip']) {
  if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0)
    skip(`${tool} is missing (run tools/setup/apt-deps.sh)`);
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-bench-dataplane-'));
let net;
let coordinator;
let client;
const bpfObjects = [];
let natLoaded = false;
let agentLog = ''; // agent-dataplane's JSON log (stderr), printed when the run fails

// Idempotent and synchronous, so the signal and exit handlers can run it as well as `finally`.
let cleaned = false;
function cleanup() {
  if (cleaned) return;
  cleaned = true;
  try {
    if (natLoaded) clearNat();
  } catch {
    // the namespace goes below, and its rules with it
  }
  for (const o of bpfObjects) o.close();
  client?.close();
  coordinator?.stop();
  net?.destroy();
  // A Pod half made when a step failed is not in PodNetwork's list: go by the names.
  for (const line of spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' }).stdout.split('\n')) {
    const ns = line.split(' ')[0];
    if (ns?.startsWith(`${TAG}-`)) spawnSync('ip', ['netns', 'del', ns]);
  }
  fs.rmSync(dir, { recursive: true, force: true });
}
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
  ['SIGHUP', 129],
]) {
  process.on(signal, () => {
    console.error(`${signal}: cleaning up`);
    cleanup();
    process.exit(code);
  });
}
process.on('exit', cleanup);

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};
const spread = (xs, digits = 0) =>
  xs.length > 1 ? `; ${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)}` : '';
const nowMs = () => Number(process.hrtime.bigint()) / 1e6;
const benchStarted = nowMs();
const thousands = (n) => n.toLocaleString('en-US');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** CPU time (ms) a process has used, all its threads: utime + stime from /proc/PID/stat. */
function cpuMs(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // USER_HZ is 100 on Linux
}

/**
 * Waits (at most `boundMs`) until `pid` has used at most 10 ms of CPU in each of three
 * consecutive half seconds, and not before `notBefore`. About 8 s after applying a large
 * snapshot (V8's memory reducer delay), agent-dataplane spends some 200 ms of CPU over 2 s
 * shrinking its heap; on two cores that work would land in whichever throughput run came next.
 * Returns the time waited.
 */
async function quiet(pid, notBefore, boundMs = 30_000) {
  const started = Date.now();
  let calm = 0;
  let last = cpuMs(pid);
  while ((calm < 3 || Date.now() < notBefore) && Date.now() - started < boundMs) {
    await sleep(500);
    const now = cpuMs(pid);
    calm = now - last <= 10 ? calm + 1 : 0;
    last = now;
  }
  return Date.now() - started;
}
async function eventually(what, check, ms = 60_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(50);
  }
}

let exitCode = 0;
/** Prints a budget line; a miss makes the run exit 1. */
function verdict(line, ok) {
  console.log(`${line} ${ok ? 'OK' : 'OVER BUDGET'}`);
  if (!ok && exitCode === 0) exitCode = 1;
}

try {
  // The workspace code the bench drives, bundled as dns.mjs bundles its helpers. koffi (native)
  // stays external and resolves through the node_modules link; protoRoot() finds proto/ here.
  fs.symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'));
  for (const proto of ['libs/agent/contracts/proto', 'node_modules/grpc-health-check/proto']) {
    fs.cpSync(path.join(root, proto), path.join(dir, 'proto'), { recursive: true });
    fs.cpSync(path.join(root, proto), path.join(dir, 'bin/proto'), { recursive: true });
  }
  // The three builds run side by side: they are most of a --quick run's set-up time.
  const agentBundle = path.join(dir, 'bin', 'agent-dataplane.cjs');
  const flows = path.join(dir, 'flows');
  const [lib] = await Promise.all([
    bundleLibraries(
      path.join(dir, 'dataplane-lib.cjs'),
      [
        "export { PodNetwork } from './libs/agent/feature-dataplane/src/__fixtures__/pod-network';",
        "export { TestCoordinator } from '@podmin/agent-contracts/testing';",
        "export { snapshot } from '@podmin/agent-contracts';",
        // Files, not the package indexes, which also load the process's NestJS module and the
        // gRPC health service's server side.
        "export { BpfObject } from './libs/agent/feature-dataplane/src/bpf/libbpf';",
        "export { MapProgrammer } from './libs/agent/feature-dataplane/src/maps/map-programmer';",
        "export { MAPS, PROGRAM, IPPROTO, serviceKey } from './libs/agent/feature-dataplane/src/maps/layout';",
        "export { agentClient } from './libs/agent/data-access-grpc/src/agent-client';",
        "export { localAgentArgs } from './libs/shared/testing/src/agent-flags';",
        "export { serviceExecArgv, serviceEnv } from '@podmin/agent-feature-supervisor';",
        "export { serviceVip } from '@podmin/util-desired-state';",
      ],
      { external: ['koffi'] },
    ),
    // agent-dataplane as the build ships it (proto/, koffi/ and bpf/ beside the bundle).
    run(
      'bundling agent-dataplane',
      process.execPath,
      [path.join(root, 'tools/scripts/bundle.mjs'), 'agent-dataplane'],
      { ...process.env, PODMIN_BUNDLE_OUT: agentBundle },
    ),
    run('gcc flows.c', 'gcc', [
      '-O2',
      '-o',
      flows,
      path.join(root, 'libs/agent/feature-dataplane/src/__fixtures__/flows.c'),
    ]),
  ]);
  const unusable = lib.PodNetwork.usable();
  if (unusable !== undefined) skip(unusable);

  // The 10,000 Services, each with the three backends; VIPs as the leader derives them.
  const TCP = lib.snapshot.SnapshotPort_Protocol.TCP;
  const backendsOf = (addresses) => addresses.map((address) => ({ address, nodeId: 'node-a' }));
  const services = Array.from({ length: SERVICES }, (_, i) => {
    const namespace = `ns${i % 100}`;
    const name = `svc-${i}`;
    return {
      namespace,
      name,
      vip: lib.serviceVip(CLUSTER, namespace, name),
      ports: [{ port: 80, targetPort: 8080, protocol: TCP }],
      backends: backendsOf(Object.values(BACKENDS)),
    };
  });
  if (new Set(services.map((s) => s.vip)).size !== SERVICES) throw new Error('VIPs collide');
  const iperfService = {
    namespace: 'default',
    name: 'iperf',
    vip: lib.serviceVip(CLUSTER, 'default', 'iperf'),
    ports: [{ port: 5201, targetPort: 5201, protocol: TCP }],
    backends: backendsOf([BACKENDS['web-a']]),
  };

  // The network: client Pod, three backend Pods, servers in each, iperf3 -s in web-a.
  net = lib.PodNetwork.create(TAG, NODE);
  net.addPod('client', CLIENT);
  const clientNs = net.ns('client');
  for (const [pod, address] of Object.entries(BACKENDS)) {
    net.addPod(pod, address);
    net.spawn(net.ns(pod), [flows, 'serve-tcp', '8080', pod]);
    await eventually(`${pod} serves`, () => {
      const r = net.exec(net.nodeNs, [flows, 'tcp', address, '8080', '1', '1']).stdout;
      return Promise.resolve(r.includes('ok 1 ') ? true : undefined);
    });
  }
  net.spawn(net.ns('web-a'), ['iperf3', '-s', '-p', '5201']);
  await eventually('iperf3 -s listens', () => {
    const r = net.exec(net.ns('web-a'), ['ss', '-Hltn', 'sport = :5201']);
    return Promise.resolve(r.stdout.trim() !== '' ? true : undefined);
  });

  // A real Coordinator server and the real agent-dataplane in the node namespace.
  const runtimeDir = path.join(dir, 'run/podmin/agent');
  fs.mkdirSync(runtimeDir, { recursive: true, mode: 0o700 });
  coordinator = await lib.TestCoordinator.start(path.join(runtimeDir, 'coordinator.sock'));
  const profile = { memory: 'fast' }; // the supervisor's profile for agent-dataplane (agent.ts)
  const agent = net.spawn(
    net.nodeNs,
    [
      process.execPath,
      ...lib.serviceExecArgv(profile),
      agentBundle,
      ...lib.localAgentArgs(path.join(dir, 'bucket')),
    ],
    {
      ...lib.serviceEnv(profile),
      PODMIN_NODE_ROOT: dir,
      PODMIN_NODE_ADDRESS: NODE,
    },
  );
  agent.stderr?.on('data', (d) => (agentLog += d.toString()));
  agent.once('exit', (code) => {
    if (!cleaned) console.error(`agent-dataplane exited ${code}:\n${agentLog.slice(-4000)}`);
  });
  client = lib.agentClient('dataplane', path.join(runtimeDir, 'dataplane.sock'));
  const status = () => client.getStatus({}, { timeoutMs: 5000 });
  await eventually('agent-dataplane answers', () => status().catch(() => undefined), 30_000);

  let revision = 0;
  /** Hands `list` to agent-dataplane through the coordinator; resolves once it applied it. */
  const apply = async (list) => {
    revision++;
    const snap = { generation: revision, revision: `rev-${revision}`, services: list };
    const started = nowMs();
    coordinator.setView(snap);
    // Programming blocks agent-dataplane's event loop, so status calls may time out meanwhile.
    const s = await eventually(
      'agent-dataplane follows the snapshot',
      async () => {
        const st = await status().catch(() => undefined);
        return st?.snapshotRevision === snap.revision ? st : undefined;
      },
      180_000,
    );
    if (s.problem) throw new Error(`agent-dataplane: ${s.problem}`);
    if (list.length > 0 && !s.attached) throw new Error('agent-dataplane did not attach');
    return { status: s, ms: nowMs() - started };
  };
  /** The last `program Service maps` time agent-dataplane logged (its own measurement). */
  const agentProgramMs = () => {
    const lines = agentLog.split('\n').filter((l) => l.includes('program Service maps'));
    try {
      return JSON.parse(lines.at(-1) ?? '{}').ms;
    } catch {
      return undefined;
    }
  };

  // Every number below shares the machine with whatever else runs on it: say how busy it is.
  console.log(
    `${os.cpus().length} CPUs, load average ${os.loadavg()[0].toFixed(1)}; ip6tables: ${spawnSync('ip6tables', ['-V'], { encoding: 'utf8' }).stdout.trim()}`,
  );
  const full = [...services, iperfService];
  const first = await apply(full);
  const appliedAt = Date.now();
  if (first.status.vips !== SERVICES + 1 || first.status.backends !== SERVICES * 3 + 1)
    throw new Error(`agent-dataplane holds ${JSON.stringify(first.status)}`);
  console.log(
    `agent-dataplane follows the ${thousands(full.length)}-Service snapshot in ${first.ms.toFixed(0)} ms ` +
      `(coordinator → long poll → decode → maps → attach to ${first.status.interfaces.length} veths; ` +
      `its own log: program ${agentProgramMs() ?? '?'} ms)`,
  );

  // --- 1. iperf3 throughput ----------------------------------------------------------------
  const iperf = async (address) => {
    for (let attempt = 0; ; attempt++) {
      const r = await execIn(
        clientNs,
        ['iperf3', '-c', address, '-p', '5201', '-t', String(IPERF_SECONDS), '-J'],
        (IPERF_SECONDS + 30) * 1000,
      );
      let report;
      try {
        report = JSON.parse(r.stdout);
      } catch {
        throw new Error(`iperf3 to ${address}: ${r.stderr || r.stdout}`);
      }
      // The server takes a moment after one test before it accepts the next.
      if (report.error?.includes('busy') && attempt < 20) {
        await sleep(200);
        continue;
      }
      if (report.error) throw new Error(`iperf3 to ${address}: ${report.error}`);
      return report.end.sum_received.bits_per_second / 1e9;
    }
  };
  const throughput = { direct: [], vip: [] };
  const agentCpu = { direct: 0, vip: 0 };
  // 11 s after the snapshot: past the heap shrinking (see quiet), which otherwise lands in the
  // first measured VIP run. Then one discarded run each way warms both paths (neighbour
  // entries, the flow's caches). The agent's CPU during the measured runs is printed.
  const settled = await quiet(agent.pid, appliedAt + 11_000);
  const warmCpu = cpuMs(agent.pid);
  for (const address of [BACKENDS['web-a'], iperfService.vip]) await iperf(address);
  const warmupAgentMs = cpuMs(agent.pid) - warmCpu;
  for (let round = 0; round < ROUNDS; round++) {
    for (const route of round % 2 === 0 ? ['direct', 'vip'] : ['vip', 'direct']) {
      const before = cpuMs(agent.pid);
      throughput[route].push(await iperf(route === 'vip' ? iperfService.vip : BACKENDS['web-a']));
      agentCpu[route] += cpuMs(agent.pid) - before;
    }
  }
  const gbit = (xs) => `${median(xs).toFixed(2)} Gbit/s (median${spread(xs, 2)})`;
  console.log(
    `iperf3 TCP, client Pod → web-a through the node namespace, ${ROUNDS} round(s) of ${IPERF_SECONDS} s, alternating:`,
  );
  console.log(`  straight to the backend address (kernel routing)   ${gbit(throughput.direct)}`);
  console.log(`  through the VIP (eBPF DNAT + SNAT, redirect)      ${gbit(throughput.vip)}`);
  console.log(
    `  (started once agent-dataplane was idle, ${(settled / 1000).toFixed(1)} s after the snapshot, and one discarded run each way, ` +
      `during which it used ${warmupAgentMs.toFixed(0)} ms of CPU; during the measured runs: ` +
      `direct ${agentCpu.direct.toFixed(0)} ms, VIP ${agentCpu.vip.toFixed(0)} ms)`,
  );
  const tputRatio = median(throughput.vip) / median(throughput.direct);
  verdict(
    `ratio iperf3 VIP / direct = ${tputRatio.toFixed(2)} (budget >= 0.95)`,
    tputRatio >= 0.95,
  );

  // --- 2. short connections per second -----------------------------------------------------
  const rulesFile = path.join(dir, 'kube-nat.rules');
  fs.writeFileSync(rulesFile, kubeProxyNat(services));
  /** COUNT short connections from the client Pod to `vip`:80. */
  const connect = async (vip, count) => {
    const started = nowMs();
    const r = await execIn(
      clientNs,
      [flows, 'tcp', vip, '80', String(count), String(PROCS)],
      600_000,
    );
    const seconds = (nowMs() - started) / 1000;
    if (r.status !== 0) throw new Error(`flows tcp ${vip}: ${r.stderr}`);
    const [, ok, failed] = /ok (\d+) failed (\d+)/.exec(r.stdout) ?? [];
    const names = [...r.stdout.matchAll(/^(web-[a-z]) \d+$/gm)].map((m) => m[1]).sort();
    return { ok: Number(ok), failed: Number(failed), rate: Number(ok) / seconds, names };
  };
  /** A short run that must reach all three backends without a failure. */
  const probe = async (vip, what) => {
    const r = await connect(vip, 300);
    if (r.ok !== 300 || r.names.join() !== 'web-a,web-b,web-c')
      throw new Error(`${what}: ${r.ok}/300 connections, backends ${r.names.join()}`);
  };
  /** Packets the SNAT rule has source-NATed (the nat table sees a connection's first only). */
  const snatCount = () => {
    const r = net.exec(net.nodeNs, [
      'ip6tables',
      '-t',
      'nat',
      '-L',
      'KUBE-POSTROUTING',
      '-v',
      '-n',
      '-x',
    ]);
    const line = r.stdout.split('\n').find((l) => /\bSNAT\b/.test(l));
    if (!line) throw new Error(`no SNAT rule in KUBE-POSTROUTING: ${r.stderr}`);
    return Number(line.trim().split(/\s+/)[0]);
  };
  const rates = { vipLast: [], vipMiddle: [], iptLast: [], iptMiddle: [] };
  let failed = 0;
  let restoreMs;
  let attached = true; // the snapshot of part 1 is in place
  // Rounds alternate the order (vip ipt, ipt vip, ...), so each path is set up once per block
  // of rounds: the nat table is restored once (it takes seconds) and stays; while agent-
  // dataplane is attached its TCX program redirects VIP packets before netfilter sees them,
  // which every probe checks (the eBPF forward counter rises, the SNAT rule's does not; and
  // the other way round on the ip6tables path).
  for (let round = 0; round < ROUNDS; round++) {
    for (const mode of round % 2 === 0 ? ['vip', 'ipt'] : ['ipt', 'vip']) {
      if (mode === 'vip' && !attached) {
        await apply(full);
        attached = true;
      }
      if (mode === 'ipt' && attached) {
        const s = (await apply([])).status;
        if (s.attached || s.vips !== 0) throw new Error('agent-dataplane did not detach');
        attached = false;
      }
      if (mode === 'ipt' && restoreMs === undefined) {
        const started = nowMs();
        natLoaded = true;
        const r = await execIn(net.nodeNs, ['ip6tables-restore', rulesFile], 300_000);
        if (r.status !== 0) throw new Error(`ip6tables-restore: ${r.stderr}`);
        restoreMs = nowMs() - started;
      }
      const snatBefore = natLoaded ? snatCount() : 0;
      const forwardedBefore = (await status()).forwarded;
      await probe(services[LAST].vip, mode === 'vip' ? 'VIP (eBPF)' : 'ip6tables');
      // Packets, not connections: a client port reused at once may continue a closed flow.
      const snatted = natLoaded ? snatCount() - snatBefore : 0;
      const viaEbpf = (await status()).forwarded - forwardedBefore;
      if (mode === 'vip' && (viaEbpf < 300 || snatted !== 0))
        throw new Error(`VIP probe: ${viaEbpf} eBPF forwards, ${snatted} ip6tables SNATs`);
      if (mode === 'ipt' && (viaEbpf !== 0 || snatted === 0))
        throw new Error(`ip6tables probe: ${viaEbpf} eBPF forwards, ${snatted} ip6tables SNATs`);
      for (const [which, index] of [
        ['Last', LAST],
        ['Middle', MIDDLE],
      ]) {
        const r = await connect(services[index].vip, CONNECTIONS);
        failed += r.failed;
        rates[`${mode}${which}`].push(r.rate);
      }
    }
  }
  if (natLoaded) clearNat();
  const per = (xs) => `${median(xs).toFixed(0)} conn/s (median${spread(xs)})`;
  console.log(
    `short TCP connections, ${thousands(SERVICES)} Services × 3 backends: flows tcp VIP 80 ${thousands(CONNECTIONS)} ${PROCS} ` +
      `(reset on close), ${ROUNDS} round(s), alternating; ip6tables-restore of the kube-proxy-style nat table ` +
      `(${thousands(SERVICES)} KUBE-SVC, ${thousands(SERVICES * 3)} KUBE-SEP chains) took ${restoreMs.toFixed(0)} ms:`,
  );
  console.log(
    `  VIP (eBPF), last Service                                          ${per(rates.vipLast)}`,
  );
  console.log(
    `  ip6tables, last Service (rule 10,000 of 10,000 in KUBE-SERVICES)  ${per(rates.iptLast)}`,
  );
  console.log(
    `  VIP (eBPF), middle Service                                        ${per(rates.vipMiddle)}`,
  );
  console.log(
    `  ip6tables, middle Service (rule 5,001 of 10,000)                  ${per(rates.iptMiddle)}`,
  );
  if (failed > 0)
    console.log(`  ${thousands(failed)} connection(s) failed (not counted in the rates)`);
  const middleRatio = median(rates.vipMiddle) / median(rates.iptMiddle);
  console.log(
    `reference: ratio connections/s VIP / ip6tables, middle Service (rule 5,001) = ${middleRatio.toFixed(2)} (unbudgeted)`,
  );
  const connRatio = median(rates.vipLast) / median(rates.iptLast);
  verdict(
    `ratio connections/s VIP / ip6tables, last Service (rule 10,000 of 10,000 in KUBE-SERVICES) = ${connRatio.toFixed(2)} (budget >= 1.00)`,
    connRatio >= 1,
  );

  // --- 3. map programming ------------------------------------------------------------------
  const objectPath = path.join(root, 'bpf/obj/service_lb.o');
  const loadMs = [];
  const programMs = [];
  const programCpuMs = []; // this process's CPU time: on a busy machine, less than the wall time
  let written = 0;
  let second;
  for (let run = 0; run < PROGRAM_RUNS; run++) {
    const t0 = nowMs();
    const object = lib.BpfObject.load(objectPath, lib.PROGRAM);
    bpfObjects.push(object);
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
    const result = programmer.program(services);
    const t3 = nowMs();
    const used = process.cpuUsage(cpu);
    loadMs.push(t1 - t0);
    programMs.push(t3 - t2);
    programCpuMs.push((used.user + used.system) / 1000);
    written = result.updated;
    const probeKey = lib.serviceKey(services[LAST].vip, 80, lib.IPPROTO.TCP);
    if (result.backends !== SERVICES * 3 || maps.services.lookup(probeKey) === undefined)
      throw new Error(`programming wrote ${JSON.stringify(result)}`);
    if (run === PROGRAM_RUNS - 1) {
      const changed = services.map((s, i) =>
        i === 1234
          ? { ...s, backends: backendsOf([BACKENDS['web-a'], BACKENDS['web-b'], SPARE]) }
          : s,
      );
      const t4 = nowMs();
      const r = programmer.program(changed);
      second = { ...r, ms: nowMs() - t4 };
    }
    object.close();
  }
  console.log(
    `map programming in this process, ${PROGRAM_RUNS} run(s) on fresh maps (BpfObject.load, then MapProgrammer.program):`,
  );
  console.log(
    `  BpfObject.load (open, verifier, map creation)   ${median(loadMs).toFixed(1)} ms (median${spread(loadMs, 1)})`,
  );
  console.log(
    `  program ${thousands(SERVICES)} Services × 3 backends, ${thousands(written)} entries written   ${median(programMs).toFixed(1)} ms (median${spread(programMs, 1)}; CPU time ${median(programCpuMs).toFixed(1)} ms)`,
  );
  console.log(
    `  second snapshot, one Service's backend replaced: ${second.updated} written, ${second.deleted} deleted   ${second.ms.toFixed(1)} ms`,
  );
  const programmed = median(programMs);
  verdict(
    `map programming 10,000 Services x 3 backends = ${programmed.toFixed(1)} ms (budget <= 1000 ms)`,
    programmed <= 1000,
  );
  console.log(`bench dataplane took ${((nowMs() - benchStarted) / 1000).toFixed(0)} s`);
} catch (err) {
  console.error(`bench dataplane failed: ${err instanceof Error ? err.stack : err}`);
  if (agentLog) console.error(`agent-dataplane's log (end):\n${agentLog.slice(-4000)}`);
  exitCode = 2;
} finally {
  cleanup();
}
process.exit(exitCode);

/**
 * Runs `argv` in namespace `ns` without blocking this process's event loop, which serves the
 * Coordinator long poll agent-dataplane waits on (PodNetwork.exec would stall it past the
 * poll's deadline during long runs).
 */
function execIn(ns, argv, timeoutMs) {
  return new Promise((resolve, reject) => {
    const child = spawn('ip', ['netns', 'exec', ns, ...argv], {
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: timeoutMs,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ status: code ?? -1, stdout, stderr }));
  });
}

/** Runs a command to completion; rejects with its stderr when it fails. */
function run(what, command, args, env = process.env) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${what} failed (${code}): ${stderr}`)),
    );
  });
}

/** Deletes the nat table the ip6tables path loaded (and the conntrack hooks it brought). */
function clearNat() {
  const ns = net.nodeNs;
  net.exec(ns, ['ip6tables', '-t', 'nat', '-F']);
  net.exec(ns, ['ip6tables', '-t', 'nat', '-X']);
  // iptables-nft leaves the emptied base chains hooked; deleting the table unhooks them.
  if (/nf_tables/.test(spawnSync('ip6tables', ['-V'], { encoding: 'utf8' }).stdout))
    net.exec(ns, ['nft', 'delete', 'table', 'ip6', 'nat']);
  natLoaded = false;
}

/** The nat table kube-proxy (iptables mode) writes for `list`, for ip6tables-restore. */
function kubeProxyNat(list) {
  const chains = [':KUBE-SERVICES - [0:0]', ':KUBE-POSTROUTING - [0:0]', ':KUBE-MARK-MASQ - [0:0]'];
  const rules = [
    '-A PREROUTING -j KUBE-SERVICES',
    '-A POSTROUTING -j KUBE-POSTROUTING',
    '-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000',
    '-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN',
    '-A KUBE-POSTROUTING -j MARK --xor-mark 0x4000',
    `-A KUBE-POSTROUTING -j SNAT --to-source ${NODE} --random-fully`,
  ];
  const services = [];
  const perService = [];
  list.forEach((s, i) => {
    const svc = `KUBE-SVC-${i}`;
    chains.push(`:${svc} - [0:0]`);
    services.push(`-A KUBE-SERVICES -d ${s.vip}/128 -p tcp -m tcp --dport 80 -j ${svc}`);
    perService.push(`-A ${svc} -j KUBE-MARK-MASQ`);
    const n = s.backends.length;
    s.backends.forEach((b, k) => {
      const sep = `KUBE-SEP-${i}-${k}`;
      chains.push(`:${sep} - [0:0]`);
      // kube-proxy's choice: endpoint k with probability 1/(n-k) of what is left.
      const pick =
        k < n - 1 ? `-m statistic --mode random --probability ${(1 / (n - k)).toFixed(11)} ` : '';
      perService.push(`-A ${svc} ${pick}-j ${sep}`);
      perService.push(`-A ${sep} -s ${b.address}/128 -j KUBE-MARK-MASQ`);
      perService.push(
        `-A ${sep} -p tcp -m tcp -j DNAT --to-destination [${b.address}]:${s.ports[0].targetPort}`,
      );
    });
  });
  return [
    '*nat',
    ':PREROUTING ACCEPT [0:0]',
    ':INPUT ACCEPT [0:0]',
    ':OUTPUT ACCEPT [0:0]',
    ':POSTROUTING ACCEPT [0:0]',
    ...chains,
    ...rules,
    ...services,
    ...perService,
    'COMMIT',
    '',
  ].join('\n');
}
