// A process running inside a netns node as its own process group (podmin-agent with its
// services, or a stand-in server), whose JSON log lines a test reads as they arrive.
import { spawn, type ChildProcess } from 'node:child_process';
import type { NetnsNode } from './netns-cluster';

/** One JSON log line of an agent or its service processes. */
export interface LogLine {
  readonly time: string;
  readonly level: string;
  readonly service?: string;
  readonly msg: string;
  readonly [field: string]: unknown;
}

/** A process running in a node's namespace as its own process group, with its output kept. */
export class NodeProcess {
  private text = '';
  private byteCount = 0;
  private readonly parsed: LogLine[] = [];
  /** When this test process received each of {@link parsed} (its clock, not the node's). */
  private readonly arrivals: number[] = [];
  private partial = '';
  /** Resolves with the exit code (or -1 on a signal) once the process is gone. */
  readonly exited: Promise<number>;
  readonly child: ChildProcess;

  constructor(
    readonly node: NetnsNode,
    command: readonly string[],
    env: Readonly<Record<string, string>>,
  ) {
    // `ip netns exec` execs the command in place, so the pid is node's own and, with
    // detached, the leader of a new process group holding the agent and its services.
    this.child = spawn('ip', ['netns', 'exec', node.ns, ...command], {
      env: { ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const take = (d: Buffer): void => {
      const s = d.toString();
      this.text += s;
      this.byteCount += d.length;
      const lines = (this.partial + s).split('\n');
      this.partial = lines.pop() ?? '';
      const now = Date.now();
      for (const l of lines) {
        if (!l.startsWith('{')) continue;
        try {
          this.parsed.push(JSON.parse(l) as LogLine);
          this.arrivals.push(now);
        } catch {
          // A non-JSON line stays in output() only.
        }
      }
    };
    this.child.stdout?.on('data', take);
    this.child.stderr?.on('data', take);
    this.exited = new Promise((resolve) => this.child.on('close', (code) => resolve(code ?? -1)));
  }

  /** The process group's id (the first process's pid). */
  get pgid(): number {
    const pid = this.child.pid;
    if (pid === undefined) throw new Error(`the agent of ${this.node.id} did not start`);
    return pid;
  }

  /** Sends a signal to the whole process group (agent and services). */
  signal(sig: NodeJS.Signals): void {
    process.kill(-this.pgid, sig);
  }

  /** Every JSON line so far. */
  lines(): readonly LogLine[] {
    return this.parsed;
  }

  /** Lines with this message, optionally only those written at or after `sinceMs` (wall clock). */
  find(msg: string, sinceMs = 0): LogLine[] {
    return this.parsed.filter((l) => l.msg === msg && Date.parse(l.time) >= sinceMs);
  }

  /**
   * JSON lines this test received at or after `sinceMs` on its own clock, each with that time:
   * unlike {@link find}, right for a node whose clock is skewed.
   */
  received(sinceMs = 0): { line: LogLine; at: number }[] {
    return this.parsed.flatMap((line, i) => {
      const at = this.arrivals[i] ?? 0;
      return at >= sinceMs ? [{ line, at }] : [];
    });
  }

  /** Bytes written so far to stdout and stderr together (the log volume). */
  bytes(): number {
    return this.byteCount;
  }

  /** All output as text (for a failure's explanation). */
  output(): string {
    return this.text;
  }

  /** SIGKILLs the process group if it still runs and waits (bounded) for the exit. */
  async kill(): Promise<void> {
    try {
      this.signal('SIGCONT');
      this.signal('SIGKILL');
    } catch {
      // Already gone.
    }
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.exited, new Promise((r) => (timer = setTimeout(r, 5_000)))]);
    clearTimeout(timer);
  }
}

/**
 * The last `count` output lines of each process (only those `keep` accepts, when given), each
 * block under a header naming its node, namespace and pid: what a failed step prints.
 */
export function recentOutput(
  processes: readonly NodeProcess[],
  count: number,
  keep: (line: string) => boolean = () => true,
): string {
  return processes
    .map(
      (p) =>
        `--- ${p.node.id} (${p.node.ns}, pid ${p.child.pid ?? '?'}) ---\n` +
        p.output().split('\n').filter(keep).slice(-count).join('\n'),
    )
    .join('\n');
}

/**
 * A step runner for specs that drive node processes: runs a step and, when it fails, prints
 * `explain()` (the nodes' recent logs) before passing the failure on.
 */
export function explainingSteps(explain: () => string): (fn: () => Promise<void>) => Promise<void> {
  return async (fn) => {
    try {
      await fn();
    } catch (err) {
      console.error(explain());
      throw err;
    }
  };
}
