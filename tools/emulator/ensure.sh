#!/usr/bin/env bash
# Installs the AWS-API emulator (moto's standalone server) used by every integration test
# into a cached Python venv, once, and prints the path of its moto_server binary.
#
# Cache: ${PODMIN_DEV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/podmin-dev}/moto-venv
# All progress goes to stderr; stdout carries only the binary path.
set -euo pipefail

readonly MOTO_VERSION="5.2.5"
cache_dir="${PODMIN_DEV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/podmin-dev}"
venv_dir="${cache_dir}/moto-venv"
moto_bin="${venv_dir}/bin/moto_server"

die() {
  echo "tools/emulator/ensure.sh: $*" >&2
  exit 1
}

installed_version() {
  "${venv_dir}/bin/python" - <<'PY' 2>/dev/null || true
from importlib.metadata import version
print(version("moto"))
PY
}

if [[ -x "${moto_bin}" && "$(installed_version)" == "${MOTO_VERSION}" ]]; then
  echo "${moto_bin}"
  exit 0
fi

command -v python3 >/dev/null 2>&1 || die "installing moto ${MOTO_VERSION}: python3 is not on PATH (install Python 3.9 or newer)"

mkdir -p "${cache_dir}"
# Serialise concurrent installs (parallel jest workers, several shells) on one lock file.
exec 9>"${cache_dir}/moto-venv.lock"
if command -v flock >/dev/null 2>&1; then
  flock -w 600 9 || die "installing moto ${MOTO_VERSION}: timed out waiting for ${cache_dir}/moto-venv.lock"
  # Another process may have finished the install while we waited.
  if [[ -x "${moto_bin}" && "$(installed_version)" == "${MOTO_VERSION}" ]]; then
    echo "${moto_bin}"
    exit 0
  fi
fi

if [[ ! -x "${venv_dir}/bin/python" ]]; then
  echo "creating Python venv at ${venv_dir}" >&2
  python3 -m venv "${venv_dir}" >&2 ||
    die "creating venv ${venv_dir}: python3 -m venv failed (on Debian/Ubuntu install the python3-venv package)"
fi

echo "installing moto[server]==${MOTO_VERSION} into ${venv_dir}" >&2
"${venv_dir}/bin/python" -m pip install --quiet --disable-pip-version-check "moto[server]==${MOTO_VERSION}" >&2 ||
  die "installing moto[server]==${MOTO_VERSION} with pip failed (see the pip output above)"

[[ -x "${moto_bin}" ]] || die "installing moto ${MOTO_VERSION}: ${moto_bin} is missing after pip install"
echo "${moto_bin}"
