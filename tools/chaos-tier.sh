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
skip() {
  echo "SKIPPED chaos: $*"
  exit 0
}
[[ $(id -u) -eq 0 ]] || skip "needs root for network namespaces"
command -v ip >/dev/null 2>&1 || skip "ip (iproute2) is not installed"
ip netns list >/dev/null 2>&1 || skip "\`ip netns\` is not available"
for tool in ping curl dig; do
  command -v "$tool" >/dev/null 2>&1 || skip "$tool is not installed (tools/setup/apt-deps.sh)"
done
dpkg -L libfaketime 2>/dev/null | grep -q '/libfaketime\.so\.1$' ||
  skip "libfaketime is not installed (tools/setup/apt-deps.sh)"
bash tools/setup/python-tools.sh moto_server >/dev/null || skip "no moto emulator (tools/setup/python-tools.sh failed)"
# podmin-agent and every service program it supervises.
projects=(agent agent-registry agent-staticpod agent-identity agent-coordinator agent-dns agent-dataplane)
NX_DAEMON=false npx nx run-many -t build -p "${projects[@]}" --output-style=stream >/dev/null
status=0
npx jest -c apps/agent/jest.chaos.config.cjs --ci || status=$?
echo "chaos tier took $((SECONDS - started)) s (build included)"
exit "$status"
