#!/usr/bin/env bash
# Compiles the dataplane's eBPF C sources (bpf/src/*.c) to the committed objects in bpf/obj/.
#   bash bpf/build.sh [--check]   (--check rebuilds into a temporary directory and fails when
#                                  the committed objects differ, like the generated gRPC code)
# The objects are target-independent BPF bytecode (little-endian, which covers x86_64 and
# arm64). DWARF is stripped and source paths are made relative, so the bytes depend only on the
# sources and the compiler; BTF stays, because libbpf needs it for the map definitions.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
for tool in clang llvm-strip; do
  command -v "${tool}" >/dev/null 2>&1 || { echo "bpf/build.sh: ${tool} is required (Debian: clang, llvm; tools/setup/apt-deps.sh installs them)" >&2; exit 1; }
done
[[ -f /usr/include/bpf/bpf_helpers.h ]] || { echo "bpf/build.sh: libbpf headers are required (Debian: libbpf-dev; tools/setup/apt-deps.sh installs them)" >&2; exit 1; }
multiarch="$(gcc -print-multiarch 2>/dev/null || true)"
out="${here}/obj"
target="${out}"
if [[ "${1:-}" == "--check" ]]; then target="$(mktemp -d)"; trap 'rm -rf "${target}"' EXIT; fi
mkdir -p "${target}"
cd "${here}"
for src in src/*.c; do
  obj="${target}/$(basename "${src%.c}").o"
  clang -O2 -g -target bpfel -mcpu=v3 -Wall -Werror -fdebug-prefix-map="${here}=." \
    ${multiarch:+-I/usr/include/${multiarch}} -c "${src}" -o "${obj}"
  llvm-strip -g "${obj}"
done
if [[ "${1:-}" == "--check" ]]; then
  if ! diff -r "${out}" "${target}" >/dev/null; then
    echo "bpf/build.sh --check: committed objects in bpf/obj differ from bpf/src; run bash bpf/build.sh" >&2
    exit 1
  fi
  echo "committed eBPF objects are up to date (clang $(clang -dumpversion))" >&2
fi
