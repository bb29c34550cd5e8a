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
# Sets cache ($PODMIN_INFRA_STACK_DIR, else under the dev cache), bin, log and cached_build.
# shellcheck source-path=SCRIPTDIR source=../lib/go-stack.sh
source "${here}/../lib/go-stack.sh" infra-stack "the infrastructure engine"

# tofu_from_source VERSION DIR: OpenTofu's go.mod replaces github.com/hashicorp/hcl/v2 with its
# fork, and `go install module@version` refuses modules with replace directives; a wrapper
# module in DIR/src carries the upstream requirements, sums and replacements unchanged.
# shellcheck disable=SC2317 # run through cached_build, in a bash of its own
tofu_from_source() {
  local version=$1 dir=$2 json gomod moddir
  mkdir -p "${dir}/src" && cd "${dir}/src"
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
}

build_tofu() {
  local version=${OPENTOFU_VERSION} dir="${cache}/tofu-${OPENTOFU_VERSION}"
  cached_build "tofu ${version}" "${dir}" "github.com/opentofu/opentofu/cmd/tofu (unmodified upstream)" \
    tofu_from_source "${version}" "${dir}"
  ln -sf "${dir}/tofu" "${bin}/tofu"
}

# aws_provider_from_source VERSION MODULE-VERSION DIR NAME: no replace directives upstream, so
# `go install module@version` builds it as published; the binary is renamed NAME.
# shellcheck disable=SC2317 # run through cached_build, in a bash of its own
aws_provider_from_source() {
  local version=$1 module=$2 dir=$3 name=$4
  GOBIN="${dir}" CGO_ENABLED=0 go install -trimpath \
    -ldflags "-s -w -X github.com/hashicorp/terraform-provider-aws/version.ProviderVersion=${version}" \
    "github.com/hashicorp/terraform-provider-aws@${module}"
  mv "${dir}/terraform-provider-aws" "${dir}/${name}"
}

build_aws_provider() {
  local version=${AWS_PROVIDER_VERSION} module=${AWS_PROVIDER_MODULE_VERSION}
  local dir="${cache}/aws-provider-${version}"
  local name="terraform-provider-aws_v${version}"
  cached_build "aws provider ${version}" "${dir}" \
    "github.com/hashicorp/terraform-provider-aws@${module} (large: expect tens of minutes)" \
    aws_provider_from_source "${version}" "${module}" "${dir}" "${name}"
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
