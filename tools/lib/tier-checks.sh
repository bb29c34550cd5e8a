# shellcheck shell=bash
# Sourced by the tier scripts (tools/*-tier.sh) with the tier's name as its argument
# (`source tools/lib/tier-checks.sh node`): the checks that decide whether the tier can run on
# this machine. A check that fails prints `SKIPPED <tier>: <reason>` and exits 0, so a tier that
# cannot run never counts as failed.
TIER=${1:?usage: source tools/lib/tier-checks.sh TIER}

# skip REASON...: the tier cannot run here.
skip() {
  echo "SKIPPED ${TIER}: $*"
  exit 0
}

# need_root WHAT...: root is needed for WHAT.
need_root() {
  [[ $(id -u) -eq 0 ]] || skip "needs root for $*"
}

# need_tool TOOL [REASON]: TOOL on PATH, else skip with REASON ("TOOL is not installed").
need_tool() {
  command -v "$1" >/dev/null 2>&1 || skip "${2:-$1 is not installed}"
}

# need_netns: iproute2 with working `ip netns`.
need_netns() {
  need_tool ip "ip (iproute2) is not installed"
  ip netns list >/dev/null 2>&1 || skip "\`ip netns\` is not available"
}

# build_agent_bundles: podmin-agent and every service program it supervises.
build_agent_bundles() {
  local projects=(agent agent-registry agent-staticpod agent-identity agent-coordinator agent-dns agent-dataplane)
  NX_DAEMON=false npx nx run-many -t build -p "${projects[@]}" --output-style=stream >/dev/null
}
