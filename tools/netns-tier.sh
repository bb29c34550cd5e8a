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
# shellcheck source-path=SCRIPTDIR source=lib/tier-checks.sh
source tools/lib/tier-checks.sh netns
need_root "network namespaces"
need_netns
need_tool ping "ping is needed to check the namespaces reach each other"
build_agent_bundles
npx jest -c apps/agent/jest.node.config.cjs --ci
