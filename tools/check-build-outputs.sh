#!/usr/bin/env bash
# Proves that every Nx build target declares every file it writes in its `outputs`: builds for
# real, moves dist/ aside, builds again (every task must then come from the Nx cache) and
# compares both trees file by file (mode and SHA-256). A file written but not declared is in
# the first tree only, which is how a cached build once shipped service bundles without protos.
# The agent artifact (agent:artifact, the archive a node installs) is built and checked too.
#   bash tools/check-build-outputs.sh [more `nx run-many` arguments, e.g. -p cli agent]
# Leaves a freshly built dist/ behind either way.
set -euo pipefail
cd "$(dirname "$0")/.."
export NX_DAEMON=false NX_NO_CLOUD=true NX_TUI=false FORCE_COLOR=0

work=$(mktemp -d "${TMPDIR:-/tmp}/podmin-build-outputs.XXXXXX")
restore() {
  # A failed check must not leave the workspace without its bundles: put the real build back.
  if [[ -d $work/dist ]]; then
    rm -rf dist
    mv "$work/dist" dist
  fi
  rm -rf "$work"
}
trap restore EXIT

snapshot() {
  (cd dist && find . \( -type f -o -type l \) -printf '%p %m\n' | sort | while read -r file mode; do
    printf '%s %s %s\n' "$mode" "$(sha256sum <"$file" | cut -c1-64)" "$file"
  done)
}

# Both builds use a cache and workspace data of their own, empty at first: the first must then
# run every task for real and store it (a --skip-nx-cache run stores nothing, and the cache
# shared in the home directory may already hold these tasks), and the second must restore
# every task from it.
export NX_CACHE_DIRECTORY=$work/nx-cache NX_WORKSPACE_DATA_DIRECTORY=$work/nx-data

build() {
  if ! npx nx run-many -t build artifact --output-style=static "$@" >"$work/build.log" 2>&1; then
    cat "$work/build.log" >&2
    echo "check-build-outputs: the build failed" >&2
    exit 1
  fi
}

# Without dist/, Nx cannot call outputs already on disk a cache hit either.
rm -rf dist
build "$@"
if ! grep -Eq 'Cache: +0/[0-9]+ hit' "$work/build.log"; then
  cat "$work/build.log" >&2
  echo "check-build-outputs: the first build was served from a cache; it must run every task" >&2
  exit 1
fi
snapshot >"$work/fresh.txt"
mv dist "$work/dist"

build "$@"
summary=$(grep -Eo 'for [0-9]+ out of [0-9]+ tasks' "$work/build.log" || true)
read -r hits total < <(awk '{ print $2, $5 }' <<<"${summary:-for 0 out of -1 tasks}")
if [[ $hits != "$total" ]]; then
  cat "$work/build.log" >&2
  echo "check-build-outputs: the second build ran tasks instead of reading the cache (${summary:-no cache hits}); is an input changing during the build?" >&2
  exit 1
fi
snapshot >"$work/cached.txt"

if ! diff -u --label 'built' --label 'from the Nx cache' "$work/fresh.txt" "$work/cached.txt" >&2; then
  echo "check-build-outputs: a build served from the cache differs (lines with - are files a build target writes but does not declare in its project.json \"outputs\")" >&2
  exit 1
fi
rm -rf "$work/dist"
echo "check-build-outputs: $(wc -l <"$work/fresh.txt") files, all restored from the Nx cache ($total tasks)" >&2
