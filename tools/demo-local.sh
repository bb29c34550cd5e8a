#!/usr/bin/env bash
# The main job on the local provider, from a fresh clone: install and build, then
#   connect → build and push a tiny image → init and deploy it with a Service and a secret
#   → setup (start this machine's node) → wait until the static Pod manifest, its workload
#   identity and its secret file exist → show them.
# Podmin's state for the demo lives under ./tmp/demo so it never touches your own contexts.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true NX_DAEMON=false NX_NO_CLOUD=true NX_TUI=false

bash tools/setup/node-deps.sh
echo "Building podmin…" >&2
npx nx run-many -t build -p cli agent agent-registry agent-staticpod agent-identity agent-coordinator agent-dns --output-style=static >/dev/null

demo=$root/tmp/demo
export XDG_CONFIG_HOME=$demo/config XDG_CACHE_HOME=$demo/cache XDG_DATA_HOME=$demo/data XDG_RUNTIME_DIR=$demo/run
mkdir -p "$demo/work" "$XDG_RUNTIME_DIR"
cd "$demo/work"
rm -f daemonset.yaml
podmin() { node "$root/dist/bin/podmin.cjs" "$@"; }
say() { printf '\n$ podmin %s\n' "$*" >&2; }

say connect demo --provider local
podmin connect demo --provider local
say build "$root/tools/demo/hello" -t hello:v1
podmin build "$root/tools/demo/hello" -t hello:v1
say push hello:v1
podmin push hello:v1
say init web -g default --image hello:v1 --service
podmin init web -g default --image hello:v1 --service
# Declare a secret for the Pod: the agent mounts it read-only at /var/run/podmin/aws-parameter-store/greeting.
sed -i 's#^    metadata:#    metadata:\n      annotations:\n        podmin.dev/aws-parameter-store: greeting#' daemonset.yaml
say secret create greeting --for web --from-stdin
if ! podmin secret list --for web | grep -q greeting; then
  printf 'hello, secret world' | podmin secret create greeting --for web --from-stdin
fi
say validate -f daemonset.yaml
podmin validate -f daemonset.yaml
say deploy web -g default -f daemonset.yaml
podmin deploy web -g default -f daemonset.yaml
say setup
node_root=$(podmin setup)
say list
podmin list

manifest=$node_root/etc/podmin/manifests/web.yaml
identity=$node_root/run/podmin/workloads/web/identity
echo "Waiting for the agent to publish the static Pod…" >&2
for _ in $(seq 1 60); do
  [[ -f $manifest && -f $identity/tls.crt ]] && break
  sleep 0.5
done
[[ -f $manifest ]] || { echo "the static Pod did not appear; see $node_root/var/log/podmin-agent.log" >&2; exit 1; }
secret_dir=$(sed -n 's#.*path: \(.*aws-parameter-store\)$#\1#p' "$manifest")

cat >&2 <<TXT

The agent published the static Pod kubelet would run:
  $manifest
$(grep -E 'podmin.dev/(revision|identity-revision)|image:' "$manifest" | sed 's/^/    /')
Its workload identity (files 0444, selected by a symlink):
  $(ls -l "$identity/" | tail -n +2 | awk '{print $1, $NF}' | paste -sd ' ')
  $(openssl x509 -noout -subject -ext subjectAltName -in "$identity/tls.crt" 2>/dev/null | tr '\n' ' ')
Its secret, mounted read-only at /var/run/podmin/aws-parameter-store/greeting:
  $secret_dir/greeting

podmin-agent keeps running in the background. To use this demo cluster yourself:
  export XDG_CONFIG_HOME=$XDG_CONFIG_HOME XDG_CACHE_HOME=$XDG_CACHE_HOME XDG_DATA_HOME=$XDG_DATA_HOME
  node $root/dist/bin/podmin.cjs list
  node $root/dist/bin/podmin.cjs teardown      # stops the agent
TXT
