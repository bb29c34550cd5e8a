# shellcheck shell=bash
# Sourced by the scripts that build a stack of programs from Go modules into a cache outside the
# repository (tools/infra-stack/build.sh, tools/node-stack/build.sh):
#   source tools/lib/go-stack.sh STACK WHAT
# (e.g. `node-stack "the node stack"`): sets `cache` to the stack's cache directory,
#   ${PODMIN_<STACK>_DIR:-${PODMIN_DEV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/podmin-dev}/<STACK>}
# (STACK upper-cased, - as _: PODMIN_NODE_STACK_DIR), and `bin` to CACHE/bin (created), fails
# unless Go is on PATH (naming WHAT it would build), and gives the log prefix and one cached
# build per component.
STACK=${1:?usage: source tools/lib/go-stack.sh STACK WHAT}
cache_variable="PODMIN_$(tr 'a-z-' 'A-Z_' <<<"${STACK}")_DIR"
cache="${!cache_variable:-${PODMIN_DEV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/podmin-dev}/${STACK}}"
bin="${cache}/bin"
mkdir -p "${bin}"
command -v go >/dev/null 2>&1 || {
  echo "${STACK}: Go is required to build ${2:-it}" >&2
  exit 1
}

log() { printf '%s: %s\n' "${STACK}" "$*" >&2; }

# timed LOGFILE TIMEFILE CMD...: runs CMD with its output in LOGFILE and, where /usr/bin/time
# exists, its wall time and peak memory in TIMEFILE. A CMD that is a shell function runs in a
# bash of its own with errexit, so its first failing step fails it.
timed() {
  local logfile=$1 timefile=$2
  shift 2
  if declare -F "$1" >/dev/null; then
    local fn=$1
    shift
    set -- bash -euo pipefail -c "$(declare -f "${fn}")"$'\n'"${fn} \"\$@\"" "${fn}" "$@"
  fi
  if [[ -x /usr/bin/time ]]; then
    /usr/bin/time -v -o "${timefile}" "$@" >"${logfile}" 2>&1
  else
    "$@" >"${logfile}" 2>&1
  fi
}

# summary TIMEFILE: " (wall <h:mm:ss>, peak <n> MiB …)" from a /usr/bin/time -v report, or
# nothing without one.
summary() {
  [[ -f $1 ]] || return 0
  awk -F': ' '/Elapsed \(wall clock\)/ { w = $2 } /Maximum resident set size/ { m = int($2 / 1024) }
    END { printf " (wall %s, peak RSS %d MiB (largest single process))", w, m }' "$1"
}

# cached_build LABEL DIR WHAT CMD...: unless DIR holds a finished build (DIR/.built), builds it
# afresh: DIR emptied, CMD run (timed: DIR.log, DIR.time), DIR/src (a build's scratch module)
# removed, DIR marked built. Logs "LABEL: cached", "LABEL: building WHAT" and "LABEL: built in
# N s"; on failure logs the last lines of DIR.log and exits 1.
cached_build() {
  local label=$1 dir=$2 what=$3
  shift 3
  if [[ -f "${dir}/.built" ]]; then
    log "${label}: cached in ${dir}"
    return 0
  fi
  log "${label}: building ${what}"
  rm -rf "${dir}" "${dir}.time" && mkdir -p "${dir}"
  local started=$SECONDS
  timed "${dir}.log" "${dir}.time" "$@" || {
    log "${label}: build FAILED; last lines of ${dir}.log:"
    tail -n 20 "${dir}.log" >&2
    exit 1
  }
  rm -rf "${dir}/src"
  touch "${dir}/.built"
  log "${label}: built in $((SECONDS - started)) s$(summary "${dir}.time")"
}
