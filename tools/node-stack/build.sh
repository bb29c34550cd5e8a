#!/usr/bin/env bash
# Builds the upstream node stack from its Go modules through the Go module proxy, with the
# versions pinned in tools/node-stack/versions.env: kubelet (unmodified upstream source),
# containerd with ctr and its runc shim, the CNI plugins ptp, host-local and loopback, crictl
# and CoreDNS. runc comes from Debian (tools/setup/apt-deps.sh installs containerd, which
# depends on it).
#
# Idempotent: every output is cached under one directory outside the repository
#   ${PODMIN_NODE_STACK_DIR:-${PODMIN_DEV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/podmin-dev}/node-stack}/<component>-<version>/
# and rebuilt only when missing. Each build's log and (with /usr/bin/time) wall time and peak
# memory are kept beside it in <component>-<version>.log and .time. Prints what it built and
# where; fails with the component named when a build fails.
#   tools/node-stack/build.sh [component ...]   (default: all)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env disable=SC1091
source "${here}/versions.env"
# Sets cache ($PODMIN_NODE_STACK_DIR, else under the dev cache), bin, log and cached_build.
# shellcheck source-path=SCRIPTDIR source=../lib/go-stack.sh
source "${here}/../lib/go-stack.sh" node-stack "the node stack"

# go_install NAME VERSION MODULE-PATH PACKAGE...: `go install` of packages at one version into
# <cache>/<name>-<version>, then links the binaries into <cache>/bin.
go_install() {
  local name=$1 version=$2 packages=("${@:3}")
  local dir="${cache}/${name}-${version}"
  cached_build "${name} ${version}" "${dir}" "${packages[*]}" \
    env GOBIN="${dir}" CGO_ENABLED=0 go install -trimpath "${packages[@]/%/@${version}}"
  for f in "${dir}"/*; do ln -sf "${f}" "${bin}/$(basename "${f}")"; done
}

# kubelet_from_source VERSION DIR: k8s.io/kubernetes replaces its staging modules with ./staging
# paths, which a module download does not contain; a wrapper module in DIR/src pins each to the
# matching v0.x release.
# shellcheck disable=SC2317 # run through cached_build, in a bash of its own
kubelet_from_source() {
  local version=$1 dir=$2 staging=${1/v1./v0.} gomod minor ldflags
  mkdir -p "${dir}/src" && cd "${dir}/src"
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
}

build_kubelet() {
  local version=${KUBELET_VERSION} dir="${cache}/kubelet-${KUBELET_VERSION}"
  cached_build "kubelet ${version}" "${dir}" "k8s.io/kubernetes/cmd/kubelet (unmodified upstream)" \
    kubelet_from_source "${version}" "${dir}"
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
