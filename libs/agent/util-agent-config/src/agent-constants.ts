/**
 * What the agent's processes must agree on, in one place (STYLE.md §7.11): a value here is read by
 * more than one service process, or by a process and the supervisor, and changing it changes
 * every reader at once.
 */

/**
 * TTL of every `svc.cluster.local` answer (and the SOA minimum, the negative TTL), in seconds:
 * agent-dns serves it, and podmin-agent's shutdown waits it out after the drain (its DNS TTL
 * margin is this many seconds), so an answer a Pod cached just before the drain still reaches a
 * forwarding node.
 */
export const DNS_TTL_SECONDS = 5;
