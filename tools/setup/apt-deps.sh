#!/usr/bin/env bash
# Installs the Debian packages the integration tests drive as real clients: skopeo (copies
# and inspects images through the node registry) and containerd with ctr (pulls and unpacks
# them), bats and shellcheck (userdata/aws.sh tests and lint), kmod's modinfo (the infra tier's
# NAT64 Jool install test, with gcc and binutils' objcopy building its module files), dig
# (queries CoreDNS on the local node) and gcc with an arm64 cross compiler (the node tier's
# multi-platform C workload), ping (the netns tier checks its namespaces reach each
# other), and for the eBPF dataplane clang, llvm and libbpf-dev (bpf/build.sh), libbpf1 (loaded
# through FFI at run time), bpftool (verifier logs), iptables and nftables (its benchmark), and
# libfaketime (the chaos tier runs a node's agent with its clock 60 s off). Idempotent: does
# nothing when every package is already installed.
#
# Usage: tools/setup/apt-deps.sh   (as root, or with sudo available)
set -euo pipefail

readonly PACKAGES=(skopeo containerd protobuf-compiler bats shellcheck kmod bind9-dnsutils nsd dnsperf gcc binutils gcc-aarch64-linux-gnu libc6-dev-arm64-cross iputils-ping clang llvm libbpf-dev libbpf1 bpftool iptables nftables libfaketime)

missing=()
for package in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "${package}" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("${package}")
  fi
done
if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi

sudo_cmd=()
if [[ "$(id -u)" -ne 0 ]]; then
  command -v sudo >/dev/null 2>&1 || {
    echo "tools/setup/apt-deps.sh: installing ${missing[*]} needs root (no sudo found)" >&2
    exit 1
  }
  sudo_cmd=(sudo)
fi
echo "tools/setup/apt-deps.sh: installing ${missing[*]}" >&2
"${sudo_cmd[@]}" apt-get update -qq >&2
"${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
