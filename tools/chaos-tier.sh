#!/usr/bin/env bash
# Chaos tier (issue 29): three podmin-agents as three nodes in network namespaces on one bucket,
# with short election timings (lease 12 s, poll 1 s), under faults
# (apps/agent/src/agent-chaos.chaos-spec.ts): the bucket unreachable for 3 × the lease (a local
# directory replaced by a file, then the S3 emulator SIGSTOPped inside the bridge namespace), the
# leader SIGKILLed and SIGSTOPped, two node clocks ±60 s off (libfaketime), 2,000 idle TCP
# connections to agent-dns, the index deleted. Each scenario prints `chaos <scenario>: …`
# figures; the run must take under 5 minutes. Needs root, `ip netns`, curl, dig, libfaketime
# (tools/setup/apt-deps.sh) and the moto emulator (tools/setup/python-tools.sh), not the node stack.
# Builds the agent bundles first. Prints `SKIPPED chaos: <reason>` where the machine cannot run it.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
# shellcheck source-path=SCRIPTDIR source=lib/tier-checks.sh
source tools/lib/tier-checks.sh chaos
need_root "network namespaces"
need_netns
for tool in ping curl dig; do
  need_tool "$tool" "$tool is not installed (tools/setup/apt-deps.sh)"
done
dpkg -L libfaketime 2>/dev/null | grep -q '/libfaketime\.so\.1$' ||
  skip "libfaketime is not installed (tools/setup/apt-deps.sh)"
bash tools/setup/python-tools.sh moto_server >/dev/null || skip "no moto emulator (tools/setup/python-tools.sh failed)"
build_agent_bundles
status=0
npx jest -c apps/agent/jest.chaos.config.cjs --ci || status=$?
echo "chaos tier took $((SECONDS - started)) s (build included)"
exit "$status"
