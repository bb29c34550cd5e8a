import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { PodNetwork } from './__fixtures__/pod-network';

// bench/dataplane.mjs --quick as a smoke run: each of its budget lines (per-packet costs under
// BPF_PROG_TEST_RUN, connections/s against nftables, map programming) must be printed with a
// number, and it must leave no namespace behind. Whether a number meets its budget is
// the bench's verdict, not this test's: timings on a shared machine are not asserted.

const root = path.resolve(__dirname, '../../../..');
const bench = path.join(root, 'bench/dataplane.mjs');
const TOOLS = ['nft', 'ip6tables', 'ip6tables-restore', 'gcc'];

/** Runs the bench to completion (bounded), as a user would. */
function runBench(): { status: number | null; stdout: string; stderr: string; pid: number } {
  const r = spawnSync(process.execPath, [bench, '--quick'], {
    cwd: root,
    encoding: 'utf8',
    timeout: 280_000,
    killSignal: 'SIGTERM', // the bench cleans up on SIGTERM
  });
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '', pid: r.pid ?? 0 };
}

// The bench's own conditions for running, so this test knows which outcome to expect.
const missingTool = TOOLS.find((t) => spawnSync('sh', ['-c', `command -v ${t}`]).status !== 0);
const unusable =
  process.getuid?.() !== 0
    ? 'needs root (network namespaces, eBPF, nftables, ip6tables)'
    : missingTool !== undefined
      ? `${missingTool} is missing`
      : PodNetwork.usable();

if (unusable !== undefined) {
  process.stderr.write(`SKIPPED integration:dataplane-bench: ${unusable}\n`);
  test('the bench says SKIPPED and exits 0 where the dataplane cannot run', () => {
    const r = runBench();
    expect(r.stdout).toMatch(/^SKIPPED dataplane: .+$/m);
    expect(r.status).toBe(0);
  });
} else {
  describe('bench/dataplane.mjs --quick', () => {
    it('prints the per-packet, connection-rate and programming lines with numbers, and cleans up', () => {
      const r = runBench();
      process.stderr.write(r.stdout);
      if (r.status !== 0 && r.status !== 1) process.stderr.write(r.stderr);
      expect(r.stdout).not.toMatch(/SKIPPED/);
      const figures = [
        /"figure":"known-flow forward packet, BPF_PROG_TEST_RUN (\d+) ns","anchor":"200 ns","ratio":[\d.]+,"budget":"<= 1","status":"(OK|OVER)"/,
        /"figure":"pass-through packet, BPF_PROG_TEST_RUN (\d+) ns","anchor":"50 ns","ratio":[\d.]+,"budget":"<= 1","status":"(OK|OVER)"/,
        /"figure":"connections\/s through a VIP, 10,000 Services: (\d+)","anchor":"nftables verdict-map DNAT \d+","ratio":[\d.]+,"budget":">= 1.5","status":"(OK|OVER)"/,
        /"figure":"map programming 10,000 Services x 3 backends (\d+\.\d+) ms","anchor":"1000 ms","ratio":[\d.]+,"budget":"<= 1","status":"(OK|OVER)"/,
      ];
      for (const figure of figures) {
        const m = figure.exec(r.stdout);
        expect(m).not.toBeNull();
        expect(Number(m?.[1])).toBeGreaterThan(0);
      }
      expect(r.stdout).toMatch(/^ {2}reply \(VIP restored.* (\d+) ns/m);
      expect(r.stdout).toMatch(/^ {2}new flow \(SYN.* (\d+) ns/m);
      expect(r.stdout).toMatch(/^ {2}ip6tables, rule 10,000 of 10,000 .* (\d+) conn\/s/m);
      // Exit 1 exactly when a budget was missed; 2 (a failed run) never.
      expect(r.status).toBe(r.stdout.includes('"status":"OVER"') ? 1 : 0);
      const namespaces = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' }).stdout;
      expect(namespaces).not.toContain(`db${r.pid % 100000}-`);
    }, 300_000);
  });
}
