// One elector per process, for the real-process integration test and bench/election.mjs. Built
// into a CommonJS bundle with esbuild (jest's TypeScript transform does not reach children).
// Usage: node elector-child.cjs <bucket-dir> <id> <leaseMs> <pollMs> <renewMarginMs>
// Logs JSON lines to stderr; SIGTERM stops the elector, which resigns if it leads, and exits 0.
import { JsonLogger } from '@podmin/agent-util-logging';
import { LocalDirectoryObjectStore } from '@podmin/data-access-object-store';
import { DutyGate } from '../election/duty-gate';
import { systemElector } from '../adapters/system-elector';

async function main(): Promise<void> {
  const [bucket, id, lease, poll, margin] = process.argv.slice(2);
  if (bucket === undefined || id === undefined) {
    throw new Error('usage: elector-child <bucket-dir> <id> <leaseMs> <pollMs> <renewMarginMs>');
  }
  const log = new JsonLogger({ service: 'elector-child' });
  // Short lock timings: a stopped or killed sibling must not hold the bucket's key lock for long.
  const store = new LocalDirectoryObjectStore(bucket, { lockTimeoutMs: 3000, staleLockMs: 2000 });
  const elector = systemElector(store, log, {
    id,
    addr: `[::1]:${8081}`,
    timing: {
      leaseMs: Number(lease ?? 35_000),
      pollMs: Number(poll ?? 5_000),
      renewMarginMs: Number(margin ?? 10_000),
    },
  });
  // A stand-in leader duty: it checks its token before each "write", as the real duties will.
  const gate = new DutyGate(elector);
  let duties = 0;
  const duty = setInterval(() => {
    const token = gate.current();
    if (token?.valid() === true) duties++;
  }, 50);
  const stop = new AbortController();
  process.once('SIGTERM', () => stop.abort());
  await elector.run(stop.signal);
  clearInterval(duty);
  log.event('info', 'exit', { duties });
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
