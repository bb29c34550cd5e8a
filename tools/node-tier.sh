#!/usr/bin/env bash
# Node tier: an unmodified upstream kubelet runs what `podmin deploy` commits, on this machine.
# Builds (or reuses) the node stack with tools/node-stack/build.sh and the sandbox image from C
# with `podmin build`, pushes it with `podmin push`, runs `podmin setup` (the local node:
# podmin-agent with its registry, reconciler and identity processes), then starts containerd
# (Debian's runc) and kubelet in standalone mode (no API server) on the agent's static-Pod
# directory. Deploys a Pod with a secret and checks with crictl that its sandbox is Ready and its
# container Running, that both images came through podmin's registry, that the workload identity
# and secret are mounted, and that kubelet's Pods API socket exists.
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

node_root=$(mktemp -d "${TMPDIR:-/tmp}/podmin-node-tier.XXXXXX")
pids=()
cleanup() {
  set +e
  # kubelet first (it would restart the static Pod), then the Pods (CNI DEL removes their veths),
  # then the agent and containerd.
  [[ -n ${kubelet_pid:-} ]] && kill "$kubelet_pid" 2>/dev/null && sleep 1
  "${stack}/crictl" --runtime-endpoint "unix://${node_root}/run/containerd.sock" rmp -fa >/dev/null 2>&1
  node "$root/dist/bin/podmin.cjs" teardown >/dev/null 2>&1
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  sleep 1
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null; done
  pkill -f "containerd-shim-runc-v2 -namespace k8s.io -id .* -address ${node_root}/" 2>/dev/null
  while read -r m; do umount -l "$m" 2>/dev/null; done < <(awk -v r="$node_root" '$2 ~ "^"r {print $2}' /proc/mounts | sort -r)
  rm -rf "$node_root"
}
trap cleanup EXIT

export XDG_CONFIG_HOME=$node_root/xdg/config XDG_DATA_HOME=$node_root/xdg/data XDG_CACHE_HOME=$node_root/xdg/cache
podmin() { node "$root/dist/bin/podmin.cjs" "$@"; }
free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }

# The sandbox image, from C, through podmin build and push.
mkdir -p "$node_root/pause"
gcc -static -Os -s -o "$node_root/pause/pause" tools/node-stack/pause/pause.c
cp tools/node-stack/pause/Containerfile "$node_root/pause/"
podmin connect node-tier --provider local >/dev/null 2>&1
podmin build "$node_root/pause" -t pause:3.10 >/dev/null 2>&1
image=$(podmin push pause:3.10 2>/dev/null)

registry_port=$(free_port)
health_port=$(free_port)
export PODMIN_LOCAL_REGISTRY_LISTEN=127.0.0.1:${registry_port} PODMIN_LOCAL_HEALTH_ADDRESS=127.0.0.1:${health_port}
agent_root=$(podmin setup 2>"$node_root/setup.log") || { cat "$node_root/setup.log" >&2; exit 1; }
manifests=$agent_root/etc/podmin/manifests

# containerd: registry.podmin.internal resolves to the agent registry; the sandbox image is pinned.
mkdir -p "$node_root/certs.d/registry.podmin.internal" "$node_root/cni/bin" "$node_root/cni/conf" "$node_root/run"
cp "$stack/ptp" "$stack/host-local" "$stack/loopback" "$node_root/cni/bin/"
cat >"$node_root/certs.d/registry.podmin.internal/hosts.toml" <<TOML
server = "http://127.0.0.1:${registry_port}"
[host."http://127.0.0.1:${registry_port}"]
  capabilities = ["pull", "resolve"]
TOML
cat >"$node_root/containerd.toml" <<TOML
version = 3
root = "${node_root}/containerd/root"
state = "${node_root}/containerd/state"
[grpc]
  address = "${node_root}/run/containerd.sock"
[plugins."io.containerd.cri.v1.images"]
  [plugins."io.containerd.cri.v1.images".registry]
    config_path = "${node_root}/certs.d"
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = "${image}"
[plugins."io.containerd.cri.v1.runtime"]
  # This sandbox's root lacks CAP_SYS_RESOURCE: runc cannot lower oom_score_adj to -998.
  restrict_oom_score_adj = true
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = ["${node_root}/cni/bin"]
    conf_dir = "${node_root}/cni/conf"
  [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v2"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
      SystemdCgroup = false
TOML
cat >"$node_root/cni/conf/10-podmin.conflist" <<'JSON'
{ "cniVersion": "1.0.0", "name": "podmin", "plugins": [
  { "type": "ptp", "ipMasq": false,
    "ipam": { "type": "host-local", "ranges": [[{ "subnet": "fd50:6f64:6d69:1::/80" }]], "routes": [{ "dst": "::/0" }] } },
  { "type": "loopback" } ] }
JSON
PATH="$stack:$PATH" "$stack/containerd" --config "$node_root/containerd.toml" >"$node_root/containerd.log" 2>&1 &
pids+=($!)

# kubelet: standalone, static Pods from the manifests directory, cgroupfs on cgroup v1, Pods API.
cat >"$node_root/kubelet.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
staticPodPath: ${manifests}
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://${node_root}/run/containerd.sock
imageServiceEndpoint: unix://${node_root}/run/containerd.sock
authentication: { anonymous: { enabled: false }, webhook: { enabled: false } }
authorization: { mode: AlwaysAllow }
readOnlyPort: 0
address: "::1"
port: 0
healthzBindAddress: 127.0.0.1
healthzPort: 0
featureGates: { PodsAPI: true }
kubeReserved: { cpu: 100m, memory: 128Mi }
systemReserved: { cpu: 100m, memory: 496Mi }
enforceNodeAllocatable: []
cgroupsPerQOS: false
YAML
# What an operator does: a secret, a manifest, a deploy.
printf 'hello, node' | podmin secret create greeting --for hello --from-stdin >/dev/null 2>&1
(cd "$node_root" && podmin init hello -g default --image pause:3.10 >/dev/null 2>&1)
sed -i 's#^    metadata:#    metadata:\n      annotations:\n        podmin.dev/aws-parameter-store: greeting#' "$node_root/daemonset.yaml"
podmin deploy hello -g default -f "$node_root/daemonset.yaml" >/dev/null 2>&1
sleep 2
PATH="$stack:$PATH" "$stack/kubelet" --config "$node_root/kubelet.yaml" --root-dir "$node_root/kubelet" \
  --hostname-override node-tier >"$node_root/kubelet.log" 2>&1 &
kubelet_pid=$!
pids+=("$kubelet_pid")

crictl() { "$stack/crictl" --runtime-endpoint "unix://${node_root}/run/containerd.sock" --image-endpoint "unix://${node_root}/run/containerd.sock" "$@" 2>/dev/null; }
passed=0 failed=0
check() {
  if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "node tier: FAILED: $*" >&2; fi
}
running=false
for _ in $(seq 1 90); do
  if crictl ps --name hello --state Running -q | grep -q .; then running=true; break; fi
  sleep 1
done
sandbox_ready() { crictl pods --name hello-node-tier --state Ready -q | grep -q .; }
pulled_through_registry() { crictl images | grep -q "registry.podmin.internal/apps/pause"; }
check test "$running" = true
check sandbox_ready
check pulled_through_registry
check test -S "$node_root/kubelet/pods-api/pods-api.sock"
mounted() { crictl inspect "$(crictl ps --name hello -q | head -1)" | grep -q "\"containerPath\": \"$1\""; }
check mounted /var/run/secrets/podmin.dev/tls
check mounted /var/run/podmin/aws-parameter-store
if [[ $failed -gt 0 ]]; then
  echo "--- kubelet.log (tail)" >&2; tail -n 15 "$node_root/kubelet.log" >&2
  echo "--- containerd.log (tail)" >&2; tail -n 10 "$node_root/containerd.log" >&2
fi
echo "node: kubelet $("$stack/kubelet" --version | awk '{print $2}') ran the deployed Pod from podmin's registry: $passed checks passed, $failed failed"
echo "Tests: ${failed:+$failed failed, }$passed passed, $((passed + failed)) total" | sed 's/^Tests: 0 failed, /Tests: /'
[[ $failed -eq 0 ]]
