#!/usr/bin/env bash
# Installs the eBPF toolchain that built the committed objects, at the exact Debian package
# versions bpf/obj/TOOLCHAIN records (clang, llvm-strip, the libbpf headers), on Debian 12 as
# root, and makes it `clang` / `llvm-strip`. CI runs it in a debian:12 container before
# `bash bpf/build.sh --check` (.github/workflows/ci.yml and release.yml), so the byte-compare
# runs where the objects can be reproduced. A pinned version that has left the archive fails
# here, naming the package: rebuild the objects with the new toolchain (bash bpf/build.sh
# rewrites TOOLCHAIN) and commit both.
#   bash bpf/install-toolchain.sh [--simulate]   (--simulate: apt-get -s, links nothing)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
simulate=()
[[ ${1:-} == --simulate ]] && simulate=(-s)
mapfile -t pins < <(grep -E '^(clang-[0-9]+|llvm-[0-9]+|libbpf-dev)=' "${here}/obj/TOOLCHAIN")
((${#pins[@]} == 3)) || { echo "install-toolchain.sh: bpf/obj/TOOLCHAIN pins ${#pins[@]} of clang-N, llvm-N and libbpf-dev" >&2; exit 1; }
major="$(grep -oE '^clang-[0-9]+' <<<"${pins[*]}" | cut -d - -f 2)"
export DEBIAN_FRONTEND=noninteractive
if ((${#simulate[@]} == 0)); then apt-get update -qq; fi
# gcc: build.sh asks it for the multiarch include directory (asm/ headers of linux-libc-dev).
apt-get install "${simulate[@]}" -y -qq --no-install-recommends "${pins[@]}" gcc libc6-dev linux-libc-dev
if ((${#simulate[@]} == 0)); then
  ln -sf "/usr/bin/clang-${major}" /usr/local/bin/clang
  ln -sf "/usr/bin/llvm-strip-${major}" /usr/local/bin/llvm-strip
fi
echo "eBPF toolchain: ${pins[*]} (clang, llvm-strip -> ${major})" >&2
