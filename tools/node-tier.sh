#!/usr/bin/env bash
# Node tier: an unmodified upstream kubelet runs what `podmin deploy` commits, on this machine.
# Builds (or reuses) the node stack with tools/node-stack/build.sh, builds the sandbox (pause)
# image from C with `podmin build`, then `podmin setup` on the local provider starts the agent,
# mirrors the sandbox image to mirror/registry.k8s.io/pause and starts containerd (Debian's runc)
# and kubelet in standalone mode on the agent's static-Pod directory. A deploy with a secret must
# become a Ready sandbox with a Running container whose images came through podmin's registry,
# with the workload identity and secret mounted and kubelet's Pods API socket present; then
# `podmin teardown` must leave no process, mount or interface behind.
# Prints `SKIPPED node: <reason>` where the machine cannot run it.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
skip() {
  echo "SKIPPED node: $*"
  exit 0
}
[[ $(id -u) -eq 0 ]] || skip "needs root for containerd, runc and network namespaces"
command -v runc >/dev/null 2>&1 || skip "runc is not installed (tools/setup/apt-deps.sh installs it with containerd)"
command -v gcc >/dev/null 2>&1 || skip "gcc is needed to build the pause program"
[[ -d /sys/fs/cgroup ]] || skip "no cgroup hierarchy"
if ! out=$(bash tools/node-stack/build.sh 2>&1); then
  echo "$out" | tail -n 20 >&2
  skip "the node stack could not be built (see above)"
fi
stack="${PODMIN_NODE_STACK_DIR:-${PODMIN_DEV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/podmin-dev}/node-stack}/bin"
for b in podmin.cjs podmin-agent.cjs agent-registry.cjs agent-staticpod.cjs agent-identity.cjs; do
  [[ -f dist/bin/$b ]] || skip "dist/bin/$b is missing (run npm run build)"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/podmin-node-tier.XXXXXX")
export XDG_CONFIG_HOME=$work/xdg/config XDG_DATA_HOME=$work/xdg/data XDG_CACHE_HOME=$work/xdg/cache
export PODMIN_NODE_STACK_BIN=$stack
podmin() { node "$root/dist/bin/podmin.cjs" "$@"; }
free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
cleanup() {
  set +e
  podmin teardown >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
registry_port=$(free_port)
health_port=$(free_port)
export PODMIN_LOCAL_REGISTRY_LISTEN=127.0.0.1:${registry_port} PODMIN_LOCAL_HEALTH_ADDRESS=127.0.0.1:${health_port}

# The sandbox image from C; the same program doubles as the workload image.
mkdir -p "$work/pause"
gcc -static -Os -s -o "$work/pause/pause" tools/node-stack/pause/pause.c
cp tools/node-stack/pause/Containerfile "$work/pause/"
podmin connect node-tier --provider local >/dev/null 2>&1
podmin build "$work/pause" -t registry.k8s.io/pause:3.10 -t hello:v1 >/dev/null 2>&1
podmin push hello:v1 >/dev/null 2>&1

node_root=$(podmin setup 2>"$work/setup.log") || { cat "$work/setup.log" >&2; exit 1; }
cat "$work/setup.log" >&2

# What an operator does: a secret, a manifest, a deploy.
printf 'hello, node' | podmin secret create greeting --for hello --from-stdin >/dev/null 2>&1
(cd "$work" && podmin init hello -g default --image hello:v1 >/dev/null 2>&1)
sed -i 's#^    metadata:#    metadata:\n      annotations:\n        podmin.dev/aws-parameter-store: greeting#' "$work/daemonset.yaml"
podmin deploy hello -g default -f "$work/daemonset.yaml" >/dev/null 2>&1

socket=$(readlink -f "$node_root/run/containerd")/containerd.sock
crictl() { "$stack/crictl" --runtime-endpoint "unix://${socket}" --image-endpoint "unix://${socket}" "$@" 2>/dev/null; }
passed=0 failed=0
check() {
  if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "node tier: FAILED: $*" >&2; fi
}
running=false
for _ in $(seq 1 120); do
  if crictl ps --name hello --state Running -q | grep -q .; then running=true; break; fi
  sleep 1
done
sandbox_ready() { crictl pods --name hello --state Ready -q | grep -q .; }
pulled_through_registry() { crictl images | grep -q "registry.podmin.internal/mirror/registry.k8s.io/pause" && crictl images | grep -q "registry.podmin.internal/apps/hello"; }
mounted() { crictl inspect "$(crictl ps --name hello -q | head -1)" | grep -q "\"containerPath\": \"$1\""; }
check test "$running" = true
check sandbox_ready
check pulled_through_registry
check test -S "$node_root/var/lib/kubelet/pods-api/pods-api.sock"
check mounted /var/run/secrets/podmin.dev/tls
check mounted /var/run/podmin/aws-parameter-store

short=$(dirname "$(dirname "$socket")")
podmin teardown >/dev/null 2>&1
no_strays() {
  ! pgrep -f "$node_root" >/dev/null && ! pgrep -f "$short" >/dev/null && ! grep -q -e " $node_root" -e " $short" /proc/mounts &&
    ! ip -o link | grep -q veth && [[ ! -e $short ]]
}
check no_strays
if [[ $failed -gt 0 ]]; then
  for f in kubelet containerd podmin-agent; do
    echo "--- $f.log (tail)" >&2
    tail -n 12 "$node_root/var/log/$f.log" >&2
  done
fi
echo "node: kubelet $("$stack/kubelet" --version | awk '{print $2}') ran the deployed Pod from podmin's registry: $passed checks passed, $failed failed"
echo "Tests: ${failed:+$failed failed, }$passed passed, $((passed + failed)) total" | sed 's/^Tests: 0 failed, /Tests: /'
[[ $failed -eq 0 ]]
