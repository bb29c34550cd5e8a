#!/usr/bin/env bash
# Prints the path of the real AWS CLI (v1, `awscli` from PyPI) that the boot test's user-data
# runs, installing it first when needed into the one cached venv of the project's Python tools
# (tools/setup/python-tools.sh).
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/../setup/python-tools.sh" aws
