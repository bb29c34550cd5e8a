#!/usr/bin/env bash
# Builds the infrastructure engine from its Go modules through the Go module proxy, with the
# versions pinned in tools/infra-stack/versions.env: OpenTofu (cmd/tofu, unmodified upstream
# source) and the AWS provider (terraform-provider-aws), which it serves from a provider
# filesystem mirror so that `tofu init` needs no registry:
#   <cache>/bin/tofu
#   <cache>/providers/registry.opentofu.org/hashicorp/aws/<version>/linux_amd64/terraform-provider-aws_v<version>
#   <cache>/tofurc   (use with TF_CLI_CONFIG_FILE=<cache>/tofurc)
#
# Idempotent: every output is cached under one directory outside the repository
#   ${PODMIN_INFRA_STACK_DIR:-${PODMIN_DEV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/podmin-dev}/infra-stack}
# and rebuilt only when missing. Each build's wall time and peak memory (/usr/bin/time -v) are
# kept in <cache>/<component>-<version>.time. Prints what it built and where; fails with the
# component named when a build fails.
#   tools/infra-stack/build.sh [tofu|aws-provider ...]   (default: both)
# The provider is large (see docs in versions.env); GOMAXPROCS and GOFLAGS (e.g. -p=1) from the
# environment are honoured to bound its memory.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env disable=SC1091
source "${here}/versions.env"
cache="${PODMIN_INFRA_STACK_DIR:-${PODMIN_DEV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/podmin-dev}/infra-stack}"
bin="${cache}/bin"
mkdir -p "${bin}"
command -v go >/dev/null 2>&1 || { echo "infra-stack: Go is required to build the infrastructure engine" >&2; exit 1; }

log() { printf 'infra-stack: %s\n' "$*" >&2; }

# timed LOGFILE TIMEFILE CMD...: runs CMD with its output in LOGFILE and, where /usr/bin/time
# exists, its wall time and peak memory in TIMEFILE.
timed() {
  local logfile=$1 timefile=$2
  shift 2
  if [[ -x /usr/bin/time ]]; then
    /usr/bin/time -v -o "${timefile}" "$@" >"${logfile}" 2>&1
  else
    "$@" >"${logfile}" 2>&1
  fi
}

# summary TIMEFILE: "wall <h:mm:ss>, peak <n> MiB" from a /usr/bin/time -v report.
summary() {
  [[ -f $1 ]] || return 0
  awk -F': ' '/Elapsed \(wall clock\)/ { w = $2 } /Maximum resident set size/ { m = int($2 / 1024) }
    END { printf "wall %s, peak RSS %d MiB (largest single process)", w, m }' "$1"
}

fail() {
  local name=$1 logfile=$2
  log "${name}: build FAILED; last lines of ${logfile}:"
  tail -n 20 "${logfile}" >&2
  exit 1
}

build_tofu() {
  local version=${OPENTOFU_VERSION} dir="${cache}/tofu-${OPENTOFU_VERSION}"
  if [[ -f "${dir}/.built" ]]; then
    log "tofu ${version}: cached in ${dir}"
  else
    # OpenTofu's go.mod replaces github.com/hashicorp/hcl/v2 with its fork, and `go install
    # module@version` refuses modules with replace directives; a wrapper module carries the
    # upstream requirements, sums and replacements unchanged.
    log "tofu ${version}: building github.com/opentofu/opentofu/cmd/tofu (unmodified upstream)"
    rm -rf "${dir}" && mkdir -p "${dir}/src"
    local started=$SECONDS
    # shellcheck disable=SC2016
    timed "${dir}.log" "${dir}.time" bash -euo pipefail -c '
      version=$1 dir=$2
      cd "${dir}/src"
      json=$(go mod download -json "github.com/opentofu/opentofu@${version}")
      gomod=$(sed -n "s/.*\"GoMod\": \"\(.*\)\".*/\1/p" <<<"${json}")
      moddir=$(sed -n "s/.*\"Dir\": \"\(.*\)\".*/\1/p" <<<"${json}")
      cp "${gomod}" go.mod && chmod u+w go.mod
      cp "${moddir}/go.sum" go.sum && chmod u+w go.sum
      go mod edit -module=podmin.local/tofu-build -require="github.com/opentofu/opentofu@${version}"
      printf "//go:build tools\n\npackage tools\n\nimport _ \"github.com/opentofu/opentofu/cmd/tofu\"\n" >tools.go
      go mod download "github.com/opentofu/opentofu@${version}"
      go mod tidy -e
      # dev=no drops the "-dev" suffix a release build does not print.
      CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X github.com/opentofu/opentofu/version.dev=no" \
        -o "${dir}/tofu" github.com/opentofu/opentofu/cmd/tofu
    ' _ "${version}" "${dir}" || fail tofu "${dir}.log"
    rm -rf "${dir}/src"
    touch "${dir}/.built"
    log "tofu ${version}: built in $((SECONDS - started)) s ($(summary "${dir}.time"))"
  fi
  ln -sf "${dir}/tofu" "${bin}/tofu"
}

build_aws_provider() {
  local version=${AWS_PROVIDER_VERSION} module=${AWS_PROVIDER_MODULE_VERSION}
  local dir="${cache}/aws-provider-${version}"
  local name="terraform-provider-aws_v${version}"
  if [[ -f "${dir}/.built" ]]; then
    log "aws provider ${version}: cached in ${dir}"
  else
    # No replace directives upstream, so `go install module@version` builds it as published.
    log "aws provider ${version}: building github.com/hashicorp/terraform-provider-aws@${module} (large: expect tens of minutes)"
    rm -rf "${dir}" && mkdir -p "${dir}"
    local started=$SECONDS
    timed "${dir}.log" "${dir}.time" env GOBIN="${dir}" CGO_ENABLED=0 \
      go install -trimpath -ldflags "-s -w -X github.com/hashicorp/terraform-provider-aws/version.ProviderVersion=${version}" \
      "github.com/hashicorp/terraform-provider-aws@${module}" || fail "aws provider" "${dir}.log"
    mv "${dir}/terraform-provider-aws" "${dir}/${name}"
    touch "${dir}/.built"
    log "aws provider ${version}: built in $((SECONDS - started)) s ($(summary "${dir}.time"))"
  fi
  # Unpacked filesystem-mirror layout, under both registry host names so configurations that
  # spell either source address resolve offline.
  local host
  for host in registry.opentofu.org registry.terraform.io; do
    local target="${cache}/providers/${host}/hashicorp/aws/${version}/linux_amd64"
    mkdir -p "${target}"
    ln -sf "${dir}/${name}" "${target}/${name}"
  done
  cat >"${cache}/tofurc" <<RC
# Written by tools/infra-stack/build.sh: serve the locally built AWS provider, never the network.
provider_installation {
  filesystem_mirror {
    path    = "${cache}/providers"
    include = ["registry.opentofu.org/hashicorp/aws", "registry.terraform.io/hashicorp/aws"]
  }
  direct {
    exclude = ["registry.opentofu.org/*/*", "registry.terraform.io/*/*"]
  }
}
RC
}

components=("$@")
[[ ${#components[@]} -gt 0 ]] || components=(tofu aws-provider)
for c in "${components[@]}"; do
  case "$c" in
    tofu) build_tofu ;;
    aws-provider) build_aws_provider ;;
    *) log "unknown component ${c}; known: tofu aws-provider"; exit 2 ;;
  esac
done
log "cache: ${cache}"
log "binaries in ${bin}: $(cd "${bin}" && echo *)"
[[ -f "${cache}/tofurc" ]] && log "provider mirror: ${cache}/providers (TF_CLI_CONFIG_FILE=${cache}/tofurc)"
exit 0
