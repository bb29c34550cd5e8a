#!/usr/bin/env bash
# Runs a rendered user-data script's main for real (in the boot test's node namespace), with
# only the steps that need a real VM replaced by functions recording their call to CALLS:
# the SSM Agent package install (dpkg, systemctl), sysctl --system and systemctl. Everything
# else is the script's own code: IMDS, aws s3 sync, digests, extraction, EC2 calls, files.
# dpkg itself runs for real (setup --otel-logs installs libpq5 and Fluent Bit with it), into the
# throwaway root: its own package database there, maintainer scripts run without chroot (the
# root holds no shell) with DPKG_ROOT naming the root, dpkg's log in the root's /var/log.
#   run-userdata.sh RENDERED CALLS
set -euo pipefail
rendered=$1 calls=$2
# shellcheck source=/dev/null
source "$rendered"
install_ssm_agent() { echo "skipped install_ssm_agent" >>"$calls"; }
systemctl() { echo "skipped systemctl $*" >>"$calls"; }
sysctl() { echo "skipped sysctl $*" >>"$calls"; }
dpkg() {
  local admin="${PODMIN_TEST_ROOT:?}/var/lib/dpkg"
  mkdir -p "${admin}/info" "${admin}/updates" "${PODMIN_TEST_ROOT}/var/log"
  [[ -e ${admin}/status ]] || : >"${admin}/status"
  echo "dpkg $*" >>"$calls"
  command dpkg --root="$PODMIN_TEST_ROOT" --force-script-chrootless \
    --log="${PODMIN_TEST_ROOT}/var/log/dpkg.log" "$@"
}
main
