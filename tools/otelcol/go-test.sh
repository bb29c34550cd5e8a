#!/usr/bin/env bash
# Unit tests of our collector components (gofmt, go vet, go test), with the build flags of
# build.sh so the compiled dependencies are shared. Prints `SKIPPED otelcol-go: <reason>` where
# Go is absent, and a jest-style `Tests:` line that tools/test-all.sh adds up.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
if ! command -v go >/dev/null 2>&1; then
  echo "SKIPPED otelcol-go: Go is not installed"
  exit 0
fi
unformatted=$(gofmt -l .)
if [[ -n $unformatted ]]; then
  echo "otelcol: not gofmt-formatted: ${unformatted}" >&2
  exit 1
fi
export CGO_ENABLED=0
go vet -trimpath ./...
out=$(go test -trimpath -count=1 -v ./... 2>&1) || status=$?
echo "${out}"
passed=$(grep -c '^--- PASS' <<<"${out}" || true)
failed=$(grep -c '^--- FAIL' <<<"${out}" || true)
if ((failed > 0)); then
  echo "Tests: ${failed} failed, ${passed} passed, $((passed + failed)) total"
else
  echo "Tests: ${passed} passed, ${passed} total"
fi
exit "${status:-0}"
