#!/usr/bin/env bash
# Runs a rendered user-data script's main for real (in the boot test's node namespace), with
# only the steps that need a real VM replaced by functions recording their call to CALLS:
# the SSM Agent package install (dpkg, systemctl), sysctl --system and systemctl. Everything
# else is the script's own code: IMDS, aws s3 sync, digests, extraction, EC2 calls, files.
#   run-userdata.sh RENDERED CALLS
set -euo pipefail
rendered=$1 calls=$2
# shellcheck source=/dev/null
source "$rendered"
install_ssm_agent() { echo "skipped install_ssm_agent" >>"$calls"; }
systemctl() { echo "skipped systemctl $*" >>"$calls"; }
sysctl() { echo "skipped sysctl $*" >>"$calls"; }
main
