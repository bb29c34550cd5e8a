#!/usr/bin/env bash
# The main job on the local provider, from a fresh clone: install, build, then
# connect → init → validate → deploy → list against a cluster whose bucket is a directory.
# Podmin's state for the demo lives under ./tmp/demo so it never touches your own contexts.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true NX_DAEMON=false NX_NO_CLOUD=true NX_TUI=false

bash tools/setup/node-deps.sh
echo "Building podmin…" >&2
npx nx run cli:build --output-style=static >/dev/null

demo=$root/tmp/demo
export XDG_CONFIG_HOME=$demo/config XDG_CACHE_HOME=$demo/cache XDG_DATA_HOME=$demo/data XDG_RUNTIME_DIR=$demo/run
mkdir -p "$demo/work" "$XDG_RUNTIME_DIR"
cd "$demo/work"
rm -f daemonset.yaml
podmin() { node "$root/dist/bin/podmin.cjs" "$@"; }
say() { printf '\n$ podmin %s\n' "$*" >&2; }

say connect demo --provider local
podmin connect demo --provider local
say init web -g default --image hello:v1 --service
podmin init web -g default --image hello:v1 --service
say validate -f daemonset.yaml
podmin validate -f daemonset.yaml
say deploy web -g default -f daemonset.yaml
podmin deploy web -g default -f daemonset.yaml
say list
podmin list

cat >&2 <<TXT

The desired state is committed in the bucket directory:
  $XDG_DATA_HOME/podmin/buckets/demo/deployments/index.json
To keep using this demo cluster:
  export XDG_CONFIG_HOME=$XDG_CONFIG_HOME XDG_CACHE_HOME=$XDG_CACHE_HOME XDG_DATA_HOME=$XDG_DATA_HOME
  node $root/dist/bin/podmin.cjs list
TXT
