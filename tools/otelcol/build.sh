#!/usr/bin/env bash
# Builds podmin-otelcol, an OpenTelemetry Collector from the collector's Go modules (pinned in
# tools/otelcol/go.mod: core v0.165.0 / v1.71.0) with our podminauth extension and jsonl
# exporter, through the Go module proxy, and prints the binary's path on stdout.
#
# Idempotent: the binary is cached outside the repository, keyed by a hash of go.mod, go.sum and
# every Go source here (tests aside), under the cache root the node stack uses:
#   ${PODMIN_OTELCOL_DIR:-${PODMIN_DEV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/podmin-dev}/otelcol}/<hash>/podmin-otelcol
# and rebuilt only when that source changes. Concurrent runs wait for each other (flock).
# Exit status: 0 with the path printed; 3 when Go is absent and nothing is cached (a test tier
# then skips, with the reason on stderr); 1 when the build fails (its last lines on stderr).
#   tools/otelcol/build.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${PODMIN_OTELCOL_DIR:-${PODMIN_DEV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/podmin-dev}/otelcol}"

log() { printf 'otelcol: %s\n' "$*" >&2; }

key=$(cd "${here}" && find . -name '*.go' ! -name '*_test.go' -print | LC_ALL=C sort | xargs sha256sum go.mod go.sum | sha256sum | cut -c1-16)
dir="${cache}/${key}"
binary="${dir}/podmin-otelcol"
if [[ -x ${binary} ]]; then
  log "cached in ${dir}"
  echo "${binary}"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  log "Go is not installed and no collector is cached for this source (${key}); install Go to build it"
  exit 3
fi

mkdir -p "${dir}"
exec 9>"${dir}.lock"
command -v flock >/dev/null 2>&1 && flock 9
if [[ ! -x ${binary} ]]; then
  log "building ${key} ($(go version | cut -d' ' -f3))"
  started=$SECONDS
  if ! (cd "${here}" && CGO_ENABLED=0 go build -trimpath -o "${binary}.tmp" .) >"${dir}.log" 2>&1; then
    log "build FAILED; last lines of ${dir}.log:"
    tail -n 20 "${dir}.log" >&2
    exit 1
  fi
  mv -f "${binary}.tmp" "${binary}"
  log "built in $((SECONDS - started)) s: ${binary}"
fi
echo "${binary}"
