#!/usr/bin/env bash
# Starts the AWS-API emulator (moto_server) on 127.0.0.1 for integration tests.
#
# Usage: tools/emulator/start.sh [STATE_DIR] [PORT]   (either order: a number is the port)
#   STATE_DIR  where `emulator.endpoint`, `emulator.pid` and `emulator.log` are written
#              (default: $PODMIN_EMULATOR_STATE_DIR or ${TMPDIR:-/tmp}/podmin-emulator-$UID)
#   PORT       port to bind (default: a free loopback port)
#
# Prints `export NAME=value` lines on stdout, so `eval "$(tools/emulator/start.sh)"` points
# the tests at this server. If the state dir already holds a live, answering server, that
# one is reused. Stop it with tools/emulator/stop.sh [STATE_DIR].
set -euo pipefail

readonly READY_TIMEOUT_SECONDS=30
script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
port=""
state_dir="${PODMIN_EMULATOR_STATE_DIR:-${TMPDIR:-/tmp}/podmin-emulator-${UID}}"

die() {
  echo "tools/emulator/start.sh: $*" >&2
  exit 1
}

answers() {
  curl --silent --output /dev/null --max-time 2 "$1/moto-api/" 2>/dev/null
}

print_exports() {
  echo "export PODMIN_TEST_AWS_ENDPOINT=$1"
  echo "export PODMIN_TEST_AWS_REGION=us-east-1"
  echo "export AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true"
}

(($# <= 2)) || die "usage: start.sh [STATE_DIR] [PORT]"
for arg in "$@"; do
  if [[ "${arg}" =~ ^[0-9]+$ ]]; then
    port="${arg}"
  elif [[ -n "${arg}" ]]; then
    state_dir="${arg}"
  fi
done
command -v curl >/dev/null 2>&1 || die "starting the emulator: curl is required to probe readiness"

mkdir -p "${state_dir}"
pid_file="${state_dir}/emulator.pid"
endpoint_file="${state_dir}/emulator.endpoint"
log_file="${state_dir}/emulator.log"

if [[ -s "${pid_file}" && -s "${endpoint_file}" ]]; then
  old_pid="$(<"${pid_file}")"
  old_endpoint="$(<"${endpoint_file}")"
  if kill -0 "${old_pid}" 2>/dev/null && answers "${old_endpoint}"; then
    if [[ -n "${port}" && "${old_endpoint}" != *":${port}" ]]; then
      die "starting the emulator on port ${port}: ${state_dir} already runs one at ${old_endpoint}; stop it first"
    fi
    echo "emulator already running (pid ${old_pid}) at ${old_endpoint}" >&2
    print_exports "${old_endpoint}"
    exit 0
  fi
  rm -f "${pid_file}" "${endpoint_file}"
fi

python_bin="$(bash "${script_dir}/../setup/python-tools.sh" python)" ||
  die "starting the emulator: tools/setup/python-tools.sh failed"

if [[ -z "${port}" ]]; then
  # Ask the kernel for a free loopback port; the small window until moto binds it is fine.
  port="$("${python_bin}" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
fi
endpoint="http://127.0.0.1:${port}"

# setsid detaches the server from this shell's process group so it outlives the script.
setsid "${python_bin}" "${script_dir}/serve.py" -H 127.0.0.1 -p "${port}" >"${log_file}" 2>&1 </dev/null &
pid=$!

deadline=$((SECONDS + READY_TIMEOUT_SECONDS))
until answers "${endpoint}"; do
  if ! kill -0 "${pid}" 2>/dev/null; then
    die "starting moto_server on ${endpoint}: it exited early; log: ${log_file}"$'\n'"$(tail -n 20 "${log_file}")"
  fi
  if ((SECONDS >= deadline)); then
    kill "${pid}" 2>/dev/null || true
    die "starting moto_server on ${endpoint}: no answer within ${READY_TIMEOUT_SECONDS}s; log: ${log_file}"
  fi
  sleep 0.2
done

echo "${pid}" >"${pid_file}"
echo "${endpoint}" >"${endpoint_file}"
echo "emulator running (pid ${pid}) at ${endpoint}; stop with tools/emulator/stop.sh ${state_dir}" >&2
print_exports "${endpoint}"
