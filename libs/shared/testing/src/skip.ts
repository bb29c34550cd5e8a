import { accessSync, constants } from 'node:fs';
import path from 'node:path';

// A tier that cannot run on this machine is skipped with Jest's own skip, so the run reports it
// as skipped (never as passed), and says why once on stdout in the form every tier script uses.

const printed = new Set<string>();

/** Prints `SKIPPED <tier>: <reason>` on stdout, once per line per test process. */
export function reportSkipped(tier: string, reason: string): void {
  const line = `SKIPPED ${tier}: ${reason}`;
  if (printed.has(line)) return;
  printed.add(line);
  process.stdout.write(`${line}\n`);
}

/**
 * Jest's `describe` when `runnable`, else `describe.skip` after printing the SKIPPED line for
 * `tier` with `reason` (`reason` may name what is missing; it is only read when skipping).
 */
export function describeIf(runnable: boolean, tier: string, reason: string): jest.Describe {
  if (runnable) return describe;
  reportSkipped(tier, reason);
  return describe.skip;
}

/** Like {@link describeIf} for one test: Jest's `it`, or `it.skip` after the SKIPPED line. */
export function itIf(runnable: boolean, tier: string, reason: string): jest.It {
  if (runnable) return it;
  reportSkipped(tier, reason);
  return it.skip;
}

/**
 * {@link describeIf} on a reason that is undefined when the tier can run, as probes such as
 * `netnsUnavailable()` return it: `describeUnless(probe(), 'netns')('…', () => …)`.
 */
export function describeUnless(unusable: string | undefined, tier: string): jest.Describe {
  return describeIf(unusable === undefined, tier, unusable ?? '');
}

/** Whether this process runs as root (network namespaces, eBPF, mounts). */
export function isRoot(): boolean {
  return process.getuid?.() === 0;
}

/** {@link describeIf} on running as root; `needs` says what root is needed for. */
export function describeIfRoot(tier: string, needs: string): jest.Describe {
  return describeIf(isRoot(), tier, `needs root (${needs})`);
}

/** The absolute path of `command` on PATH, or undefined (to probe for a tool a tier needs). */
export function which(command: string): string | undefined {
  for (const dir of (process.env['PATH'] ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    const candidate = path.join(dir, command);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}
