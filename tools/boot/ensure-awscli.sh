#!/usr/bin/env bash
# Installs the real AWS CLI (v1, `awscli` from PyPI) that the boot test's user-data runs into
# a cached Python venv, once, and prints the path of its `aws` binary (as
# tools/emulator/ensure.sh does for moto).
#
# Cache: ${PODMIN_DEV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/podmin-dev}/awscli-venv
# All progress goes to stderr; stdout carries only the binary path.
set -euo pipefail

readonly AWSCLI_VERSION="1.45.11"
cache_dir="${PODMIN_DEV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/podmin-dev}"
venv_dir="${cache_dir}/awscli-venv"
aws_bin="${venv_dir}/bin/aws"

die() {
  echo "tools/boot/ensure-awscli.sh: $*" >&2
  exit 1
}

installed_version() {
  "${venv_dir}/bin/python" - <<'PY' 2>/dev/null || true
from importlib.metadata import version
print(version("awscli"))
PY
}

if [[ -x "${aws_bin}" && "$(installed_version)" == "${AWSCLI_VERSION}" ]]; then
  echo "${aws_bin}"
  exit 0
fi
command -v python3 >/dev/null 2>&1 || die "installing awscli ${AWSCLI_VERSION}: python3 is not on PATH"
mkdir -p "${cache_dir}"
# Serialise concurrent installs on one lock file.
exec 9>"${cache_dir}/awscli-venv.lock"
if command -v flock >/dev/null 2>&1; then
  flock -w 600 9 || die "installing awscli: timed out waiting for ${cache_dir}/awscli-venv.lock"
  if [[ -x "${aws_bin}" && "$(installed_version)" == "${AWSCLI_VERSION}" ]]; then
    echo "${aws_bin}"
    exit 0
  fi
fi
if [[ ! -x "${venv_dir}/bin/python" ]]; then
  echo "creating Python venv at ${venv_dir}" >&2
  python3 -m venv "${venv_dir}" >&2 || die "creating venv ${venv_dir}: python3 -m venv failed (install python3-venv)"
fi
echo "installing awscli==${AWSCLI_VERSION} into ${venv_dir}" >&2
"${venv_dir}/bin/python" -m pip install --quiet --disable-pip-version-check "awscli==${AWSCLI_VERSION}" >&2 ||
  die "installing awscli==${AWSCLI_VERSION} with pip failed (see the pip output above)"
[[ -x "${aws_bin}" ]] || die "installing awscli ${AWSCLI_VERSION}: ${aws_bin} is missing after pip install"
echo "${aws_bin}"
