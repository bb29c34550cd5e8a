#!/usr/bin/env bash
# Netns tier: three podmin-agents as three nodes on this machine, each in its own network
# namespace with its own IPv6 address and /80, sharing one local-directory bucket
# (apps/agent/src/agent-cluster.node-spec.ts): leader election, SIGKILL and SIGSTOP failover,
# fenced snapshots; and rollouts in waves (apps/agent/src/agent-rollout.node-spec.ts: stand-in
# kubelets that follow each node's static-Pod directory give synthetic readiness). Needs root and
# `ip netns`, not the node stack. Builds the agent bundles
# first. The election runs at production timings (35 s / 5 s, about three minutes) unless
# PODMIN_ELECTION_LEASE_MS / PODMIN_ELECTION_POLL_MS are set.
# Prints `SKIPPED netns: <reason>` where the machine cannot run it.
set -euo pipefail
cd "$(dirname "$0")/.."
skip() {
  echo "SKIPPED netns: $*"
  exit 0
}
[[ $(id -u) -eq 0 ]] || skip "needs root for network namespaces"
command -v ip >/dev/null 2>&1 || skip "ip (iproute2) is not installed"
ip netns list >/dev/null 2>&1 || skip "\`ip netns\` is not available"
command -v ping >/dev/null 2>&1 || skip "ping is needed to check the namespaces reach each other"
# podmin-agent and every service program it supervises.
projects=(agent agent-registry agent-staticpod agent-identity agent-coordinator agent-dns agent-dataplane)
NX_DAEMON=false npx nx run-many -t build -p "${projects[@]}" --output-style=stream >/dev/null
npx jest -c apps/agent/jest.node.config.cjs --ci
