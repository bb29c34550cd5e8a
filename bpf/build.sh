#!/usr/bin/env bash
# Compiles the dataplane's eBPF C sources (bpf/src/*.c) to the committed objects in bpf/obj/.
#   bash bpf/build.sh [--check]   (--check rebuilds into a temporary directory and fails when
#                                  the committed objects differ, like the generated gRPC code)
# The objects are target-independent BPF bytecode (little-endian, which covers x86_64 and
# arm64). DWARF is stripped and source paths are made relative, so the bytes depend only on the
# sources and the compiler; BTF stays, because libbpf needs it for the map definitions.
#
# The compiler is part of the input: bpf/obj/TOOLCHAIN records what built the committed objects
# (clang's version line and the Debian packages of the compiler and headers), and --check says
# which toolchain built them and which one it ran, so a difference can be told from a change of
# the source. The pinned toolchain is Debian 12's (bpf/README.md; .github/workflows/release.yml
# builds in a debian:12 container with exactly these package versions).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
for tool in clang llvm-strip; do
  command -v "${tool}" >/dev/null 2>&1 || { echo "bpf/build.sh: ${tool} is required (Debian: clang, llvm; tools/setup/apt-deps.sh installs them)" >&2; exit 1; }
done
[[ -f /usr/include/bpf/bpf_helpers.h ]] || { echo "bpf/build.sh: libbpf headers are required (Debian: libbpf-dev; tools/setup/apt-deps.sh installs them)" >&2; exit 1; }

# What this run compiles with: clang's version line, then the Debian packages that decide the
# bytes (the compiler, llvm-strip, the libbpf and kernel UAPI headers), one per line.
toolchain() {
  local major
  clang --version | head -n 1
  major="$(clang -dumpversion | cut -d . -f 1)"
  if command -v dpkg-query >/dev/null 2>&1; then
    dpkg-query -W -f '${Package}=${Version}\n' "clang-${major}" "llvm-${major}" libbpf-dev linux-libc-dev 2>/dev/null || true
  else
    echo '(no dpkg: not a Debian system)'
  fi
}

indent() {
  local line
  while IFS= read -r line; do printf '    %s\n' "${line}"; done
}

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
running="$(toolchain)"
if [[ "${1:-}" == "--check" ]]; then
  committed="$(cat "${out}/TOOLCHAIN" 2>/dev/null || echo '(bpf/obj/TOOLCHAIN is missing)')"
  differ=()
  for obj in "${target}"/*.o "${out}"/*.o; do
    name="$(basename "${obj}")"
    cmp -s "${out}/${name}" "${target}/${name}" || differ+=("${name}")
  done
  if ((${#differ[@]} > 0)); then
    {
      echo "bpf/build.sh --check: committed objects in bpf/obj differ from bpf/src: $(printf '%s\n' "${differ[@]}" | sort -u | tr '\n' ' ')"
      echo "  committed objects were built with:"
      indent <<<"${committed}"
      echo "  this check compiled with:"
      indent <<<"${running}"
      if [[ "${committed}" != "${running}" ]]; then
        echo "  the toolchains differ: compare in the pinned one (bpf/README.md), or run bash bpf/build.sh there after changing bpf/src"
      else
        echo "  same toolchain: bpf/src changed; run bash bpf/build.sh"
      fi
    } >&2
    exit 1
  fi
  echo "committed eBPF objects are up to date (built with: $(head -n 1 <<<"${committed}"); checked with: $(head -n 1 <<<"${running}"))" >&2
  if [[ "${committed}" != "${running}" ]]; then
    echo "note: the toolchain differs from the one recorded in bpf/obj/TOOLCHAIN, yet the bytes match" >&2
  fi
else
  printf '%s\n' "${running}" >"${out}/TOOLCHAIN"
fi
