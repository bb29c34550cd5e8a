#!/usr/bin/env bash
# Builds the release files of the podmin-agent artifact from this checkout:
#   OUT/podmin-agent-v<version>.tar.gz          the artifact production `setup` fetches
#   OUT/podmin-agent-v<version>.tar.gz.sha512   its digest, as `setup` reads it (`<hex>  <name>`)
#   OUT/podmin-agent-v<version>.tar.gz.spdx.json  its SPDX 2.3 SBOM (npm packages it bundles)
#
#   bash tools/release/build-agent-artifact.sh OUT
#
# The archive is built by exactly what `podmin setup --agent-source <checkout>` runs
# (buildAgentFromSource in libs/cli/data-access-dependencies: `node tools/scripts/bundle.mjs
# artifact --build`), so a release and a source build of one commit are the same bytes. It is
# reproducible (sorted entries, mtime 0, owner 0:0 without names, fixed modes, gzip without name
# or time), and architecture-independent: koffi's native modules for both platforms and the BPF
# bytecode are inside, so the release workflow builds it on amd64 and arm64 and publishes it
# only when both give the same digest (DESIGN.md §6.21). Needs `npm ci` first; no network.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${1:?usage: build-agent-artifact.sh OUT}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
version="$(node -p 'require(process.argv[1]).version' "${root}/package.json")"
name="podmin-agent-v${version}.tar.gz"

cd "$root"
node tools/scripts/bundle.mjs artifact --build >&2
archive="${root}/dist/artifact/${name}"
[[ -f $archive && -f ${archive}.sha512 ]] || { echo "build-agent-artifact.sh: the bundler wrote no ${name}" >&2; exit 1; }
(cd "$(dirname "$archive")" && sha512sum --check --status "${name}.sha512") ||
  { echo "build-agent-artifact.sh: ${name} does not match its .sha512" >&2; exit 1; }

# The SBOM's creation time: the commit's, so the same commit always gives the same SBOM.
if [[ -z ${SOURCE_DATE_EPOCH:-} ]]; then
  SOURCE_DATE_EPOCH="$(git -C "$root" log -1 --format=%ct 2>/dev/null || echo 0)"
fi
export SOURCE_DATE_EPOCH
node tools/release/agent-sbom.mjs "$archive" "${out}/${name}.spdx.json" >&2
cp "$archive" "${archive}.sha512" "$out/"
echo "${out}/${name} sha512:$(cut -d ' ' -f 1 "${out}/${name}.sha512")"
