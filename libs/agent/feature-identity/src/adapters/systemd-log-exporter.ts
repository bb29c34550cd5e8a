import { execFile } from 'node:child_process';
import type { LogExporter, LogExporterRestart } from '../identity.ports';

/** The systemd unit of the node's log exporter (written by user-data with `setup --otel-logs`). */
export const FLUENT_BIT_UNIT = 'fluent-bit.service';
// systemctl waits for the restart job; a Fluent Bit that will not stop is killed by its unit's
// own stop timeout well before this, so this only bounds a hung systemctl.
const RESTART_TIMEOUT_MS = 120_000;
// What of systemctl's complaint goes into a log line and the health detail.
const MAX_ERROR_CHARS = 500;

/**
 * Restarts the log exporter with `systemctl try-restart fluent-bit.service`: a running Fluent
 * Bit restarts onto the current identity generation and CA bundle; a stopped one (log export
 * off, or not started yet) stays stopped. A missing systemctl is `skipped`, not an error.
 */
export class SystemdLogExporter implements LogExporter {
  constructor(
    private readonly unit = FLUENT_BIT_UNIT,
    /** The systemctl program (tests put a recording stand-in here). */
    private readonly systemctl = 'systemctl',
  ) {}

  restart(): Promise<LogExporterRestart> {
    return new Promise((resolve) => {
      execFile(
        this.systemctl,
        ['try-restart', this.unit],
        { timeout: RESTART_TIMEOUT_MS, killSignal: 'SIGKILL' },
        (err, _stdout, stderr) => {
          if (err === null) {
            resolve({ outcome: 'restarted' });
            return;
          }
          if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
            resolve({ outcome: 'skipped', why: `${this.systemctl} not found` });
            return;
          }
          const said = String(stderr).trim().slice(0, MAX_ERROR_CHARS);
          const how = err.killed
            ? `timed out after ${RESTART_TIMEOUT_MS} ms`
            : `exit code ${String(err.code ?? 'unknown')}`;
          resolve({
            outcome: 'failed',
            error: `systemctl try-restart ${this.unit}: ${how}${said ? `: ${said}` : ''}`,
          });
        },
      );
    });
  }
}

/**
 * The log exporter of a node whose host services are not its own (the local provider, or any
 * node root other than `/`): the host's systemd must not be touched, so restarts are skipped.
 */
export class NoHostLogExporter implements LogExporter {
  constructor(private readonly why: string) {}

  restart(): Promise<LogExporterRestart> {
    return Promise.resolve({ outcome: 'skipped', why: this.why });
  }
}
