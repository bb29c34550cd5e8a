// dnsperf (DNS-OARC's load generator) as the DNS bench runs it, and the statistics of its results.
import { run } from './children.mjs';

/**
 * One dnsperf run against 127.0.0.1:`port`; its summary numbers (and every latency with
 * `verbose`). `wrap(command, args)` places it (taskset); its output goes to `stdoutFile`.
 */
export async function dnsperf(
  port,
  file,
  { seconds: s, qps, verbose = false, once = false },
  { wrap = (command, args) => [command, args], stdoutFile },
) {
  const args = ['-s', '127.0.0.1', '-p', String(port), '-d', file, '-T', '1', '-c', '1'];
  args.push('-q', '200', '-t', '2', ...(once ? ['-n', '1'] : ['-l', String(s)]));
  if (qps) args.push('-Q', String(Math.round(qps)));
  if (verbose) args.push('-v');
  const r = await run(...wrap('dnsperf', args), { stdoutFile });
  if (r.status !== 0) throw new Error(`dnsperf failed: ${r.stderr}`);
  const num = (re) => Number(re.exec(r.stdout)?.[1] ?? NaN);
  const codes = /Response codes:\s+(.*)/.exec(r.stdout)?.[1] ?? '';
  return {
    qps: num(/Queries per second:\s+([0-9.]+)/),
    lostPercent: num(/Queries lost:\s+\d+ \(([0-9.]+)%\)/),
    completed: num(/Queries completed:\s+(\d+)/),
    codes: Object.fromEntries([...codes.matchAll(/([A-Z]+) (\d+)/g)].map((m) => [m[1], +m[2]])),
    latencies: verbose
      ? [...r.stdout.matchAll(/^> \S+ \S+ \S+ ([0-9.]+)$/gm)].map((m) => Number(m[1]))
      : [],
  };
}

/** The lower median. */
export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
/** The smallest value with at least `q` of `xs` at or below it. */
export const quantile = (xs, q) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
};
