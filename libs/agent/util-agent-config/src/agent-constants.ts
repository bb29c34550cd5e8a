/**
 * What the agent's processes must agree on, in one place (STYLE.md §7.11): a value here is read by
 * more than one service process, or by a process and the supervisor, and changing it changes
 * every reader at once. Values one process alone uses stay beside it.
 */

/**
 * TTL of every `svc.cluster.local` answer (and the SOA minimum, the negative TTL), in seconds:
 * agent-dns serves it, and podmin-agent's shutdown waits it out after the drain (its DNS TTL
 * margin, {@link DNS_TTL_MARGIN_MS}), so an answer a Pod cached just before the drain still
 * reaches a forwarding node.
 */
export const DNS_TTL_SECONDS = 5;

/**
 * The DNS TTL margin of podmin-agent's shutdown, derived from {@link DNS_TTL_SECONDS}: after the
 * coordinator drained, the supervisor waits this long, with the dataplane still forwarding,
 * before DNS and the dataplane stop.
 */
export const DNS_TTL_MARGIN_MS = DNS_TTL_SECONDS * 1000;

/** How long agent-dns and agent-dataplane ask the coordinator to hold one WatchServices poll. */
export const WATCH_SERVICES_WAIT_MS = 25_000;

/** The coordinator's cap on a WatchServices poll: a longer `waitMs` is cut to this. */
export const WATCH_SERVICES_MAX_WAIT_MS = 60_000;

/** Added to a WatchServices poll's `waitMs` for the call's deadline. */
export const WATCH_SERVICES_DEADLINE_MARGIN_MS = 5_000;

/**
 * Retry of a failed WatchServices poll (agent-dns and agent-dataplane alike): the first wait,
 * doubled per consecutive failure up to the cap (FaultBackoff from `@podmin/agent-util-faults`).
 */
export const WATCH_SERVICES_RETRY = Object.freeze({ initialMs: 250, maxMs: 5_000 });

/**
 * The leader election's lease (PODMIN_ELECTION_LEASE_MS when unset): every node of a cluster
 * must use the same; a follower's endpoint report also lapses after it (the leader's table).
 */
export const ELECTION_LEASE_MS = 35_000;

/** The leader election's poll (PODMIN_ELECTION_POLL_MS when unset). */
export const ELECTION_POLL_MS = 5_000;

/** How often a follower's coordinator reports (Hello) to the leader, at most. */
export const HELLO_INTERVAL_MS = 2_000;

/**
 * How long one service process takes at most to shut down after the supervisor's stop word
 * (data-access-runtime bounds it); the supervisor kills only after {@link SERVICE_STOP_GRACE_MS}.
 */
export const SERVICE_SHUTDOWN_GRACE_MS = 8_000;

/**
 * How long the supervisor gives a service to exit after the stop word before killing it: the
 * process's own bound plus room to exit.
 */
export const SERVICE_STOP_GRACE_MS = SERVICE_SHUTDOWN_GRACE_MS + 2_000;

/**
 * The coordinator's drain bound at shutdown (a follower's leaving Hello, or a leader's last
 * snapshot pass without its own endpoints); part of the supervisor's stop bound.
 */
export const COORDINATOR_DRAIN_TIMEOUT_MS = 3_000;
