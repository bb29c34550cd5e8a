#!/usr/bin/env bash
# Installs the Python tools the tests drive, the AWS-API emulator (moto's standalone server) and
# the real AWS CLI (v1, `awscli` from PyPI, which the boot test's user-data runs), into one
# cached venv, once, and prints the path of the program asked for.
#
# Usage: tools/setup/python-tools.sh [moto_server|aws|python]   (default: moto_server)
# Cache: ${PODMIN_DEV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/podmin-dev}/python-tools-venv
# The venv is rebuilt when the pinned requirements change. All progress goes to stderr; stdout
# carries only the path.
set -euo pipefail

# Pinned together, botocore included: moto answers through botocore's service models, and the
# resolver would otherwise keep whatever an earlier install left (moto 5.2.5 under botocore
# 1.43.x breaks the agent's aws-provider test). awscli 1.46 no longer pins botocore itself.
readonly REQUIREMENTS=("moto[server]==5.2.5" "boto3==1.44.8" "botocore==1.44.8" "awscli==1.46.3")
cache_dir="${PODMIN_DEV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/podmin-dev}"
venv_dir="${cache_dir}/python-tools-venv"
stamp="${venv_dir}/.podmin-requirements"
wanted="${REQUIREMENTS[*]}"

die() {
  echo "tools/setup/python-tools.sh: $*" >&2
  exit 1
}

program="${1:-moto_server}"
case "${program}" in
  moto_server | aws | python) ;;
  *) die "unknown program '${program}': use moto_server, aws or python" ;;
esac
(($# <= 1)) || die "usage: python-tools.sh [moto_server|aws|python]"
target="${venv_dir}/bin/${program}"

installed() {
  [[ -x "${venv_dir}/bin/moto_server" && -x "${venv_dir}/bin/aws" && -f "${stamp}" && "$(<"${stamp}")" == "${wanted}" ]]
}

if installed; then
  echo "${target}"
  exit 0
fi

command -v python3 >/dev/null 2>&1 || die "installing ${wanted}: python3 is not on PATH (install Python 3.9 or newer)"
mkdir -p "${cache_dir}"
# Serialise concurrent installs (parallel jest workers, several shells) on one lock file.
exec 9>"${cache_dir}/python-tools-venv.lock"
if command -v flock >/dev/null 2>&1; then
  flock -w 600 9 || die "installing ${wanted}: timed out waiting for ${cache_dir}/python-tools-venv.lock"
  # Another process may have finished the install while we waited.
  if installed; then
    echo "${target}"
    exit 0
  fi
fi

if [[ ! -x "${venv_dir}/bin/python" ]]; then
  echo "creating Python venv at ${venv_dir}" >&2
  python3 -m venv "${venv_dir}" >&2 ||
    die "creating venv ${venv_dir}: python3 -m venv failed (on Debian/Ubuntu install the python3-venv package)"
fi

rm -f "${stamp}"
echo "installing ${wanted} into ${venv_dir}" >&2
"${venv_dir}/bin/python" -m pip install --quiet --disable-pip-version-check "${REQUIREMENTS[@]}" >&2 ||
  die "installing ${wanted} with pip failed (see the pip output above)"
for bin in moto_server aws; do
  [[ -x "${venv_dir}/bin/${bin}" ]] || die "installing ${wanted}: ${venv_dir}/bin/${bin} is missing after pip install"
done
echo "${wanted}" >"${stamp}"
echo "${target}"
