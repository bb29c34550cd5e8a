#!/usr/bin/env bash
# Stops the emulator that tools/emulator/start.sh started, found by the PID file in its
# state dir. Stopping an emulator that is not running succeeds.
#
# Usage: tools/emulator/stop.sh [STATE_DIR]
set -euo pipefail

readonly STOP_TIMEOUT_SECONDS=10
state_dir="${1:-${PODMIN_EMULATOR_STATE_DIR:-${TMPDIR:-/tmp}/podmin-emulator-${UID}}}"
pid_file="${state_dir}/emulator.pid"

if [[ ! -s "${pid_file}" ]]; then
  echo "no emulator PID file at ${pid_file}; nothing to stop" >&2
  exit 0
fi

pid="$(<"${pid_file}")"
if [[ ! "${pid}" =~ ^[0-9]+$ ]]; then
  echo "tools/emulator/stop.sh: ${pid_file} does not hold a PID" >&2
  exit 1
fi

if kill "${pid}" 2>/dev/null; then
  deadline=$((SECONDS + STOP_TIMEOUT_SECONDS))
  while kill -0 "${pid}" 2>/dev/null; do
    if ((SECONDS >= deadline)); then
      kill -KILL "${pid}" 2>/dev/null || true
      break
    fi
    sleep 0.1
  done
  echo "stopped emulator (pid ${pid})" >&2
else
  echo "emulator (pid ${pid}) was not running" >&2
fi
rm -f "${pid_file}" "${state_dir}/emulator.endpoint"
