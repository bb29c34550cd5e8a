#!/usr/bin/env bash
# Installs the workspace's npm dependencies when node_modules is missing or older than the lockfile.
set -euo pipefail
cd "$(dirname "$0")/../.."
stamp=node_modules/.podmin-install-stamp
if [[ -f $stamp && $stamp -nt package-lock.json && $stamp -nt package.json ]]; then
  exit 0
fi
echo "Installing npm dependencies (npm ci)…" >&2
npm ci --no-audit --no-fund --loglevel=error >&2
touch "$stamp"
