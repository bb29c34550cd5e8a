#!/usr/bin/env bash
# The boot test's VM, minus the VM: run under `unshare -m -n --propagation private`, it gives a
# fresh network namespace the instance's two ENIs (dummy links with the MACs IMDS lists, the
# node address on the primary, an IPv6 default route) and makes the throwaway root's node paths
# the real ones in a private mount namespace (/opt/podmin, /etc/podmin, /var/lib/podmin,
# /var/lib/kubelet bound from ROOT, and an empty /run/podmin for the tmpfs the unit mounts), so
# the agent runs exactly as podmin-agent.service names it and writes where a node writes.
# Inside the namespace it starts the instance emulator (IMDS + EC2) and a bridge to the
# host's S3/SSM emulator, prints `ready <imds port>`, and keeps the namespaces alive until its
# stdin closes. The test enters it with `nsenter -t <pid> -m -n`.
#   node-namespace.sh ROOT WORK S3_PORT INSTANCE_CONFIG
# WORK holds the bridge socket (s3.sock) and the overlay scratch space.
set -euo pipefail
root=$1 work=$2 s3_port=$3 instance_config=$4
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
node_bin="$(command -v node)"

ip link set lo up
# An ENI stand-in: a bridge (its `ip -o link` line has no @peer, as a NIC's has not) with the
# ENI's MAC, given carrier by one veth port. This kernel has no dummy links.
add_eni() {
  ip link add "$1" address "$2" type bridge
  ip link add "$1-port" type veth peer name "$1-peer"
  ip link set "$1-port" master "$1"
  ip link set "$1-port" up
  ip link set "$1-peer" up
  ip link set "$1" up
}
add_eni ens5 "$(jq -r '.interfaces[] | select(.device == 0) | .mac' "$instance_config")"
add_eni ens6 "$(jq -r '.interfaces[] | select(.device == 1) | .mac' "$instance_config")"
ip -6 addr add "$(jq -r '.interfaces[] | select(.device == 0) | .ipv6s[0]' "$instance_config")/64" dev ens5 nodad
ip -6 route add default via fe80::1 dev ens5 onlink

# A path that does not exist on this machine gets a mount point inside an overlay of its
# parent, so nothing is created outside the namespace.
mount -t tmpfs tmpfs "$work/ns"
overlays=0
declare -A overlaid=()
ensure_mount_point() {
  local dir=$1 parent
  [[ -d $dir ]] && return 0
  parent="$(dirname "$dir")"
  ensure_mount_point "$parent"
  # An overlay made for a sibling is writable already.
  if [[ -n ${overlaid[$parent]:-} ]]; then
    mkdir -p "$dir"
    return 0
  fi
  overlays=$((overlays + 1))
  overlaid[$parent]=1
  mkdir -p "$work/ns/$overlays/upper" "$work/ns/$overlays/work"
  mount -t overlay overlay -o "lowerdir=$parent,upperdir=$work/ns/$overlays/upper,workdir=$work/ns/$overlays/work" "$parent"
  mkdir -p "$dir"
}
for dir in /opt/podmin /etc/podmin /var/lib/podmin /var/lib/kubelet; do
  mkdir -p "${root}${dir}"
  ensure_mount_point "$dir"
  mount --bind "${root}${dir}" "$dir"
done
ensure_mount_point /run/podmin

"$node_bin" "$here/bridge.mjs" "tcp:127.0.0.1:${s3_port}" "unix:${work}/s3.sock" >"$work/bridge.out" &
bridge=$!
"$node_bin" "$here/instance-emulator.mjs" "$instance_config" >"$work/instance.out" &
instance=$!
trap 'kill "$bridge" "$instance" 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  if grep -q listening "$work/bridge.out" && grep -q listening "$work/instance.out"; then break; fi
  sleep 0.1
done
grep -q listening "$work/bridge.out" || { echo 'node-namespace: the S3 bridge did not start' >&2; exit 1; }
imds_port="$(sed -n 's/^listening //p' "$work/instance.out")"
[[ -n $imds_port ]] || { echo 'node-namespace: the instance emulator did not start' >&2; exit 1; }
echo "ready ${imds_port}"
read -r _ || true
