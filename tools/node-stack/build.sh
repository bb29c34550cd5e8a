#!/usr/bin/env bash
# Builds the upstream node stack from its Go modules through the Go module proxy, with the
# versions pinned in tools/node-stack/versions.env: kubelet (unmodified upstream source),
# containerd with ctr and its runc shim, the CNI plugins ptp, host-local and loopback, crictl
# and CoreDNS. runc comes from Debian (tools/setup/apt-deps.sh installs containerd, which
# depends on it).
#
# Idempotent: every output is cached under one directory outside the repository
#   ${PODMIN_NODE_STACK_DIR:-${PODMIN_DEV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/podmin-dev}/node-stack}/<component>-<version>/
# and rebuilt only when missing. Prints what it built and where; fails with the component
# named when a build fails.
#   tools/node-stack/build.sh [component ...]   (default: all)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env disable=SC1091
source "${here}/versions.env"
cache="${PODMIN_NODE_STACK_DIR:-${PODMIN_DEV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/podmin-dev}/node-stack}"
bin="${cache}/bin"
mkdir -p "${bin}"
command -v go >/dev/null 2>&1 || { echo "node-stack: Go is required to build the node stack" >&2; exit 1; }

log() { printf 'node-stack: %s\n' "$*" >&2; }

# go_install NAME VERSION MODULE-PATH PACKAGE...: `go install` of packages at one version into
# <cache>/<name>-<version>, then links the binaries into <cache>/bin.
go_install() {
  local name=$1 version=$2 packages=("${@:3}")
  local dir="${cache}/${name}-${version}"
  if [[ -f "${dir}/.built" ]]; then
    log "${name} ${version}: cached in ${dir}"
  else
    log "${name} ${version}: building ${packages[*]}"
    rm -rf "${dir}" && mkdir -p "${dir}"
    local started=$SECONDS
    if ! GOBIN="${dir}" CGO_ENABLED=0 go install -trimpath "${packages[@]/%/@${version}}" >"${dir}.log" 2>&1; then
      log "${name} ${version}: build FAILED; last lines of ${dir}.log:"
      tail -n 20 "${dir}.log" >&2
      exit 1
    fi
    touch "${dir}/.built"
    log "${name} ${version}: built in $((SECONDS - started)) s"
  fi
  for f in "${dir}"/*; do ln -sf "${f}" "${bin}/$(basename "${f}")"; done
}

build_kubelet() {
  local version=${KUBELET_VERSION} dir="${cache}/kubelet-${KUBELET_VERSION}"
  if [[ -f "${dir}/.built" ]]; then
    log "kubelet ${version}: cached in ${dir}"
  else
    # k8s.io/kubernetes replaces its staging modules with ./staging paths, which a module
    # download does not contain; a wrapper module pins each to the matching v0.x release.
    log "kubelet ${version}: building k8s.io/kubernetes/cmd/kubelet (unmodified upstream)"
    rm -rf "${dir}" && mkdir -p "${dir}/src"
    local started=$SECONDS staging=${version/v1./v0.}
    (
      cd "${dir}/src"
      go mod init podmin.local/kubelet-build >/dev/null 2>&1
      gomod=$(go mod download -json "k8s.io/kubernetes@${version}" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
      go mod edit -require="k8s.io/kubernetes@${version}"
      grep -oE '^\s*k8s.io/[a-z0-9-]+ => ./staging' "${gomod}" | awk '{print $1}' | while read -r m; do
        go mod edit -replace="${m}=${m}@${staging}"
      done
      printf '//go:build tools\n\npackage tools\n\nimport _ "k8s.io/kubernetes/cmd/kubelet"\n' >tools.go
      go mod tidy -e
      minor=${version#v1.}
      minor=${minor%%.*}
      # The version a release build stamps; without it kubelet reports v0.0.0-master.
      ldflags="-X k8s.io/component-base/version.gitVersion=${version} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${minor}"
      ldflags+=" -X k8s.io/client-go/pkg/version.gitVersion=${version} -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=${minor}"
      go build -trimpath -ldflags "${ldflags}" -o "${dir}/kubelet" k8s.io/kubernetes/cmd/kubelet
    ) >"${dir}.log" 2>&1 || {
      log "kubelet ${version}: build FAILED; last lines of ${dir}.log:"
      tail -n 20 "${dir}.log" >&2
      exit 1
    }
    rm -rf "${dir}/src"
    touch "${dir}/.built"
    log "kubelet ${version}: built in $((SECONDS - started)) s"
  fi
  ln -sf "${dir}/kubelet" "${bin}/kubelet"
}

components=("$@")
[[ ${#components[@]} -gt 0 ]] || components=(containerd cni crictl coredns kubelet)
for c in "${components[@]}"; do
  case "$c" in
    containerd)
      go_install containerd "${CONTAINERD_VERSION}" \
        github.com/containerd/containerd/v2/cmd/containerd \
        github.com/containerd/containerd/v2/cmd/ctr \
        github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 ;;
    cni)
      go_install cni-plugins "${CNI_PLUGINS_VERSION}" \
        github.com/containernetworking/plugins/plugins/main/ptp \
        github.com/containernetworking/plugins/plugins/main/loopback \
        github.com/containernetworking/plugins/plugins/ipam/host-local ;;
    crictl) go_install crictl "${CRICTL_VERSION}" sigs.k8s.io/cri-tools/cmd/crictl ;;
    coredns) go_install coredns "${COREDNS_VERSION}" github.com/coredns/coredns ;;
    kubelet) build_kubelet ;;
    *) log "unknown component ${c}; known: containerd cni crictl coredns kubelet"; exit 2 ;;
  esac
done
log "binaries in ${bin}:"
ls -1 "${bin}" >&2
