import { FaultBackoff } from '@podmin/agent-util-faults';
import type { StructuredLogger } from '@podmin/agent-util-logging';
import { MINUTE_MS, type Clock, type TelemetryIdentity } from '@podmin/util-pki';
import type { LogExporter, LogExporterRestart } from './identity.ports';
import {
  ExporterCaBundle,
  TelemetryIdentityService,
  type CaBundleRefresh,
  type TelemetryIdentityResult,
} from './telemetry-identity';
import type { TrustedWorkloadCa } from './workload-ca.trust';

/**
 * How often the log-export identity is checked. A leaf is renewed six hours before it expires,
 * so this only bounds how long a damaged or deleted generation goes unrepaired; each check is a
 * conditional GET of `identity/ca.json` and a few local reads.
 */
export const TELEMETRY_CHECK_MS = MINUTE_MS;
/** How often the exporter's `ca=` bundle is read again (the spec's five-minute refresh). */
export const EXPORTER_CA_REFRESH_MS = 5 * MINUTE_MS;
// The shortest wait between two passes, whatever the schedule says.
const MIN_WAIT_MS = 1_000;

/** What the telemetry maintenance is built from. */
export interface TelemetryMaintenanceDeps {
  /** The node root (`/` on a VM); the files go below `run/podmin/telemetry`. */
  nodeRoot: string;
  /** Whom the leaf names: the cluster and this node's ID. */
  identity: TelemetryIdentity;
  /** `mtls=true`: keep Fluent Bit's client leaf. */
  mtls: boolean;
  /** `ca=`: the exact object (for messages) and its reader. */
  ca?: { source: string; fetch: () => Promise<Uint8Array> };
  /** The workload CA that issues and checks the leaf. */
  trust: { load(): Promise<TrustedWorkloadCa> };
  /** Restarts Fluent Bit after its identity or CA bundle was replaced. */
  exporter: LogExporter;
  clock: Clock;
  logger: StructuredLogger;
  /** Called when log export's problems change: one line for the health detail, or undefined. */
  onProblems?: (detail: string | undefined) => void;
  /** The owner every generation must have (default: this process's user). */
  uid?: number;
}

/** What one pass did. */
export interface TelemetryPassReport {
  /** The leaf's state after the pass (mtls only; absent when it could not be kept). */
  leaf?: TelemetryIdentityResult;
  /** The CA bundle's refresh, when one was due. */
  ca?: CaBundleRefresh;
  /** The restart asked for, when something was replaced (now or in a pass whose restart failed). */
  restart?: LogExporterRestart;
  /** Log export's current problems, one per duty. */
  problems: string[];
}

type Duty = 'identity' | 'ca' | 'restart';
const DUTY_NAMES: Readonly<Record<Duty, string>> = {
  identity: 'log-export identity',
  ca: 'exporter CA bundle',
  restart: 'log exporter restart',
};

/**
 * agent-identity's maintenance for the node's log exporter (`setup --otel-logs`): every pass
 * checks Fluent Bit's client leaf and replaces missing or invalid material (`mtls=true`), and
 * every five minutes reads, validates and installs the `ca=` bundle, keeping the last good one.
 * Whatever was replaced leads to one `try-restart` of Fluent Bit, retried at the next pass
 * until it succeeds. Each failure is logged once per cause (and once more when it clears); a
 * failure never stops the process, since log export must never stop the node.
 */
export class TelemetryMaintenance {
  private readonly leaf: TelemetryIdentityService | undefined;
  private readonly bundle: ExporterCaBundle | undefined;
  // On a new cluster the first pass may come before the leader created the workload CA.
  private readonly identityBackoff = new FaultBackoff({
    pollMs: TELEMETRY_CHECK_MS,
    initialMs: 5_000,
  });
  private readonly caBackoff = new FaultBackoff({
    pollMs: EXPORTER_CA_REFRESH_MS,
    initialMs: TELEMETRY_CHECK_MS,
  });
  private caDueMs = Number.NEGATIVE_INFINITY;
  // Why Fluent Bit must restart; cleared once a restart succeeded (or cannot happen here).
  private restartReasons: string[] = [];
  // The current problem of each duty, logged when it appears or changes.
  private readonly problems = new Map<Duty, { key: string; message: string }>();
  private readonly skipsLogged = new Set<string>();
  private reported: string | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly deps: TelemetryMaintenanceDeps) {
    this.leaf = deps.mtls
      ? new TelemetryIdentityService(deps.nodeRoot, deps.clock, deps.uid)
      : undefined;
    this.bundle = deps.ca
      ? new ExporterCaBundle(deps.nodeRoot, deps.ca.source, deps.ca.fetch, deps.clock)
      : undefined;
  }

  /** Whether there is anything to maintain (`mtls=true` or `ca=`). */
  get enabled(): boolean {
    return this.leaf !== undefined || this.bundle !== undefined;
  }

  /** Starts the passes: the first at once, then every {@link TELEMETRY_CHECK_MS}. */
  start(): void {
    if (!this.enabled || this.stopped) return;
    this.schedule(0);
  }

  /** Stops scheduling passes (a pass in flight finishes). */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  /** One pass; passes never overlap. Never throws. */
  pass(): Promise<TelemetryPassReport> {
    const run = this.running.then(() => this.passNow());
    this.running = run.catch(() => undefined);
    return run;
  }

  private schedule(waitMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.pass().then(
        () => this.schedule(this.nextWaitMs()),
        // passNow catches every failure; this is the net under a bug, keeping the loop alive.
        (err: unknown) => {
          this.deps.logger.event('error', 'log export maintenance failed', {
            error: messageOf(err),
          });
          this.schedule(TELEMETRY_CHECK_MS);
        },
      );
    }, waitMs);
    this.timer.unref?.();
  }

  private nextWaitMs(): number {
    const identityWait = this.leaf
      ? this.problems.has('identity')
        ? this.identityBackoff.failed()
        : this.identityBackoff.regular()
      : Number.POSITIVE_INFINITY;
    // A failed restart is retried with the next identity check, or within a minute without one.
    const restartWait = this.restartReasons.length > 0 ? TELEMETRY_CHECK_MS : Infinity;
    const caWait = this.bundle ? this.caDueMs - this.deps.clock.now().getTime() : Infinity;
    return Math.max(MIN_WAIT_MS, Math.round(Math.min(identityWait, restartWait, caWait)));
  }

  private async passNow(): Promise<TelemetryPassReport> {
    const report: TelemetryPassReport = { problems: [] };
    if (this.leaf) {
      try {
        const result = await this.leaf.ensure(this.deps.identity, await this.deps.trust.load());
        report.leaf = result;
        this.identityBackoff.succeeded();
        this.clear('identity', 'log-export identity kept again');
        if (result.outcome === 'issued') {
          this.deps.logger.event('info', 'issue log-export identity', {
            generation: result.generation,
            replaced: result.replaced ?? 'missing',
            notAfter: result.notAfter.toISOString(),
          });
          this.restartReasons.push(`log-export identity ${result.replaced ?? 'missing'}`);
        }
      } catch (err) {
        this.fail('identity', 'keep log-export identity failed', messageOf(err));
      }
    }
    if (this.bundle && this.deps.clock.now().getTime() >= this.caDueMs) {
      const refresh = await this.bundle.refresh().catch((err: unknown): CaBundleRefresh => ({
        outcome: 'kept',
        path: this.bundle?.path ?? '',
        error: messageOf(err),
      }));
      report.ca = refresh;
      const now = this.deps.clock.now().getTime();
      if (refresh.outcome === 'kept') {
        this.caDueMs = now + this.caBackoff.failed(now);
        this.fail(
          'ca',
          'refresh exporter CA bundle failed; keeping the last good one',
          refresh.error,
        );
      } else {
        this.caBackoff.succeeded();
        this.caDueMs = now + EXPORTER_CA_REFRESH_MS;
        this.clear('ca', 'exporter CA bundle refreshed again');
        if (refresh.outcome === 'installed') {
          this.deps.logger.event('info', 'install exporter CA bundle', {
            source: this.deps.ca?.source ?? '',
            path: refresh.path,
          });
          this.restartReasons.push('exporter CA bundle changed');
        }
      }
    }
    if (this.restartReasons.length > 0) report.restart = await this.restartExporter();
    report.problems = [...this.problems.values()].map((p) => p.message);
    this.report(report.problems);
    return report;
  }

  /** One restart for everything replaced since the last successful one. */
  private async restartExporter(): Promise<LogExporterRestart> {
    const reasons = [...new Set(this.restartReasons)];
    const result = await this.deps.exporter.restart();
    if (result.outcome === 'restarted') {
      this.restartReasons = [];
      this.clear('restart', 'log exporter restarted again');
      this.deps.logger.event('info', 'restart log exporter', { reasons: reasons.join(', ') });
    } else if (result.outcome === 'skipped') {
      // Nothing here can restart it; retrying would not change that.
      this.restartReasons = [];
      if (!this.skipsLogged.has(result.why)) {
        this.skipsLogged.add(result.why);
        this.deps.logger.event('info', 'skip log exporter restart', { why: result.why });
      }
    } else {
      this.fail('restart', 'restart log exporter failed; retrying at the next pass', result.error);
    }
    return result;
  }

  /** Records a duty's problem, logging it when it is new or its cause changed. */
  private fail(duty: Duty, msg: string, error: string): void {
    const key = causeKey(error);
    const before = this.problems.get(duty);
    // The same cause keeps its first wording, so the health detail changes only with the cause.
    if (before?.key === key) return;
    this.problems.set(duty, { key, message: `${DUTY_NAMES[duty]}: ${error}` });
    this.deps.logger.event('warn', msg, { error });
  }

  private clear(duty: Duty, msg: string): void {
    if (this.problems.delete(duty)) this.deps.logger.event('info', msg);
  }

  private report(problems: string[]): void {
    const detail = problems.length > 0 ? problems.join('; ') : undefined;
    if (detail === this.reported) return;
    this.reported = detail;
    this.deps.onProblems?.(detail);
  }
}

/** A failure's cause without the times in it, so a fault that lasts is one cause. */
function causeKey(error: string): string {
  return error.replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z/g, '<time>');
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
