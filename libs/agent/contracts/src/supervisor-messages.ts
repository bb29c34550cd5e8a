/** A child process is ready to serve (its gRPC socket is bound). */
export interface ReadyMessage {
  readonly type: 'ready';
}

/** A child process's own health changed (e.g. the last reconcile pass failed). */
export interface HealthMessage {
  readonly type: 'health';
  readonly healthy: boolean;
  /** Why it is unhealthy, or a note a healthy process wants shown (e.g. no kubelet). */
  readonly detail?: string;
}

/** Every message a service process sends its supervising podmin-agent over the IPC channel. */
export type ChildMessage = ReadyMessage | HealthMessage;

/** Checks an IPC message received from a child; anything else is ignored by the supervisor. */
export function isChildMessage(value: unknown): value is ChildMessage {
  if (typeof value !== 'object' || value === null) return false;
  const m = value as Record<string, unknown>;
  if (m['type'] === 'ready') return Object.keys(m).length === 1;
  if (m['type'] !== 'health' || typeof m['healthy'] !== 'boolean') return false;
  const extra = Object.keys(m).filter((k) => k !== 'type' && k !== 'healthy');
  return extra.every((k) => k === 'detail' && typeof m['detail'] === 'string');
}

/**
 * The supervisor's word to stop: a supervised service process shuts down on this message, not
 * on SIGTERM or SIGINT, which it ignores while its supervisor lives. A signal sent to the whole
 * process group (a terminal's Ctrl-C, systemd's `KillMode=control-group`) thus cannot cut the
 * shutdown order short: only the supervisor decides when each process stops.
 */
export interface StopMessage {
  readonly type: 'stop';
}

/** Every message podmin-agent sends a service process over the IPC channel. */
export type SupervisorMessage = StopMessage;

/** Checks an IPC message received from the supervisor; anything else is ignored by the child. */
export function isSupervisorMessage(value: unknown): value is SupervisorMessage {
  if (typeof value !== 'object' || value === null) return false;
  const m = value as Record<string, unknown>;
  return m['type'] === 'stop' && Object.keys(m).length === 1;
}

/**
 * What a service process's domain code may tell its supervisor, injected as a port so that no
 * domain service calls `process.send` or `process.exit` itself.
 */
export interface ProcessLifecycle {
  /** Reports the process's own health and an optional note (aggregated into /healthz). */
  reportHealth(healthy: boolean, detail?: string): void;
  /** A long-running loop died: log it and exit non-zero so the supervisor restarts the process. */
  fail(what: string, err: unknown): void;
}

/** Injection token of the {@link ProcessLifecycle} port. */
export const PROCESS_LIFECYCLE = Symbol('PROCESS_LIFECYCLE');
