/** The bounds a TcpConnectionTable keeps. */
export interface TcpConnectionLimits {
  /** Open connections in all. */
  maxConnections: number;
  /** Open connections of one source address. */
  maxPerSource: number;
  /** A connection with no complete query for this long is closed. */
  idleTimeoutMs: number;
  /** The same while more than half of `maxConnections` are open. */
  idleTimeoutUnderLoadMs: number;
}

/** What `add` decided: the newcomer is kept (after closing `evicted`), or refused. */
export type TcpAdmission<C> = { admitted: true; evicted: C[] } | { admitted: false };

interface Entry {
  source: string;
  /** When its last complete query arrived, or when it was accepted. */
  activeAt: number;
}

/**
 * The open TCP connections of the DNS server, ordered by last activity, and the policy over
 * them: a newcomer over a limit closes the connection idle the longest (of its own source for
 * the per-source limit, of any for the total) instead of being refused; one with a query in
 * progress (`isBusy`) is never chosen. Idle time counts from the last complete query or the
 * accept, so bytes trickled without completing a query do not keep a connection. Pure: the
 * caller closes what it is told to and passes the time (monotonic milliseconds).
 */
export class TcpConnectionTable<C> {
  // Maps iterate in insertion order; `touch` re-inserts, so the first entry is the least
  // recently active, overall and per source.
  private readonly all = new Map<C, Entry>();
  private readonly bySource = new Map<string, Map<C, Entry>>();

  constructor(
    private readonly limits: TcpConnectionLimits,
    private readonly isBusy: (connection: C) => boolean,
  ) {}

  /** Open connections. */
  get size(): number {
    return this.all.size;
  }

  /** Open connections of `source`. */
  sizeOf(source: string): number {
    return this.bySource.get(source)?.size ?? 0;
  }

  /** Every open connection, least recently active first. */
  connections(): C[] {
    return [...this.all.keys()];
  }

  /** The idle timeout in force at the current number of connections. */
  idleTimeoutMs(): number {
    return this.all.size > this.limits.maxConnections / 2
      ? this.limits.idleTimeoutUnderLoadMs
      : this.limits.idleTimeoutMs;
  }

  /**
   * Admits a new connection of `source`, evicting (and forgetting) at most one idle connection
   * to stay within the limits; refuses it when every candidate has a query in progress.
   */
  add(connection: C, source: string, now: number): TcpAdmission<C> {
    const own = this.bySource.get(source);
    let evicted: C | undefined;
    if (own !== undefined && own.size >= this.limits.maxPerSource) {
      // Only the source's own connections make room for it: one source never pushes out others.
      evicted = this.oldestIdle(own);
      if (evicted === undefined) return { admitted: false };
    } else if (this.all.size >= this.limits.maxConnections) {
      evicted = this.oldestIdle(this.all);
      if (evicted === undefined) return { admitted: false };
    }
    if (evicted !== undefined) this.remove(evicted);
    const entry: Entry = { source, activeAt: now };
    this.all.set(connection, entry);
    const sourceMap = this.bySource.get(source) ?? new Map<C, Entry>();
    sourceMap.set(connection, entry);
    this.bySource.set(source, sourceMap);
    return { admitted: true, evicted: evicted === undefined ? [] : [evicted] };
  }

  /** Records a complete query on `connection`: it becomes the most recently active. */
  touch(connection: C, now: number): void {
    const entry = this.all.get(connection);
    if (entry === undefined) return;
    entry.activeAt = now;
    this.all.delete(connection);
    this.all.set(connection, entry);
    const own = this.bySource.get(entry.source);
    own?.delete(connection);
    own?.set(connection, entry);
  }

  /** Forgets `connection` (closed); a connection not in the table is ignored. */
  remove(connection: C): void {
    const entry = this.all.get(connection);
    if (entry === undefined) return;
    this.all.delete(connection);
    const own = this.bySource.get(entry.source);
    own?.delete(connection);
    if (own?.size === 0) this.bySource.delete(entry.source);
  }

  /**
   * Removes and returns the connections idle past the timeout at `now`, busy or not (a query
   * still incomplete after the timeout is a slow sender). The timeout is re-read after each
   * removal, so the shorter one applies only while the table is above half its limit.
   */
  expire(now: number): C[] {
    const out: C[] = [];
    for (const [connection, entry] of this.all) {
      if (now - entry.activeAt < this.idleTimeoutMs()) break;
      this.remove(connection);
      out.push(connection);
    }
    return out;
  }

  private oldestIdle(candidates: Map<C, Entry>): C | undefined {
    for (const connection of candidates.keys()) {
      if (!this.isBusy(connection)) return connection;
    }
    return undefined;
  }
}
