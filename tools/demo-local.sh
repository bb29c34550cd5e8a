#!/usr/bin/env bash
# The main job on the local provider, from a fresh clone: install and build, then
#   connect → build and push images → deploy `web` (with a Service and a secret) and `client`
#   → setup (this machine becomes the node) → from inside the client Pod, `http://web/` through
#   CoreDNS, agent-dns, the Service VIP and the eBPF dataplane to the web Pod.
# Running Pods needs root and the node stack (kubelet, containerd, CNI, CoreDNS), which this
# script builds from its Go modules on first use (about ten minutes, cached afterwards). Without
# them it says what is missing and shows what the agent still does: the static Pod manifest,
# workload identity and secret it publishes for kubelet.
# Podmin's state for the demo lives under ./tmp/demo so it never touches your own contexts.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true NX_DAEMON=false NX_NO_CLOUD=true NX_TUI=false

bash tools/setup/node-deps.sh
echo "Building podmin…" >&2
npx nx run-many -t build -p cli agent agent-registry agent-staticpod agent-identity agent-coordinator agent-dns agent-dataplane --output-style=static >/dev/null

# Can this machine run Pods? Say plainly what is missing; the rest of the demo runs anyway.
missing=""
if [[ $(id -u) -ne 0 ]]; then
  missing="root (kubelet, containerd and the eBPF dataplane need it; run: sudo npm run demo)"
elif ! command -v go >/dev/null 2>&1; then
  missing="Go (the node stack is built from its Go modules)"
fi
stack=""
if [[ -z $missing ]]; then
  bash tools/setup/apt-deps.sh
  echo "Building the node stack (kubelet, containerd, CNI plugins, crictl, CoreDNS) from their Go modules; cached after the first run…" >&2
  if bash tools/node-stack/build.sh; then
    stack="${PODMIN_NODE_STACK_DIR:-${PODMIN_DEV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/podmin-dev}/node-stack}/bin"
  else
    missing="the node stack (tools/node-stack/build.sh failed; its output is above)"
  fi
fi

demo=$root/tmp/demo
export XDG_CONFIG_HOME=$demo/config XDG_CACHE_HOME=$demo/cache XDG_DATA_HOME=$demo/data XDG_RUNTIME_DIR=$demo/run
mkdir -p "$demo/work/web" "$demo/work/client" "$XDG_RUNTIME_DIR"
podmin() { node "$root/dist/bin/podmin.cjs" "$@"; }
say() { printf '\n$ podmin %s\n' "$*" >&2; }

say connect demo --provider local
podmin connect demo --provider local
if [[ -n $stack ]]; then
  export PODMIN_NODE_STACK_BIN=$stack
  # Images from C (tools/node-stack): the Pod sandbox, and `hello`, a tiny HTTP server whose
  # `hello get URL` mode is the client.
  images=$demo/images
  mkdir -p "$images/pause" "$images/hello"
  gcc -static -Os -s -o "$images/pause/pause" tools/node-stack/pause/pause.c
  cp tools/node-stack/pause/Containerfile "$images/pause/"
  arch=$(dpkg --print-architecture 2>/dev/null || echo amd64)
  gcc -static -Os -s -o "$images/hello/hello-$arch" tools/node-stack/hello/hello.c
  sed "s/^ENV GREETING=.*/ENV GREETING=hello-from-web/" tools/node-stack/hello/Containerfile >"$images/hello/Containerfile"
  say build "$images/pause" -t registry.k8s.io/pause:3.10
  podmin build "$images/pause" -t registry.k8s.io/pause:3.10
  say build "$images/hello" -t hello:v1 --platform "linux/$arch"
  podmin build "$images/hello" -t hello:v1 --platform "linux/$arch"
else
  say build "$root/tools/demo/hello" -t hello:v1
  podmin build "$root/tools/demo/hello" -t hello:v1
fi
say push hello:v1
podmin push hello:v1

cd "$demo/work/web"
rm -f daemonset.yaml
say init web -g default --image hello:v1 --service --port 80:8080
podmin init web -g default --image hello:v1 --service --port 80:8080
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
cd "$demo/work/client"
rm -f daemonset.yaml
say init client -g default --image hello:v1
podmin init client -g default --image hello:v1
say deploy client -g default -f daemonset.yaml
podmin deploy client -g default -f daemonset.yaml
say setup
node_root=$(podmin setup)
say list
podmin list

manifest=$node_root/etc/podmin/manifests/web.yaml
identity=$node_root/run/podmin/workloads/web/identity
echo "Waiting for the agent to publish the static Pods…" >&2
for _ in $(seq 1 60); do
  [[ -f $manifest && -f $identity/tls.crt ]] && break
  sleep 0.5
done
[[ -f $manifest ]] || { echo "the static Pod did not appear; see $node_root/var/log/podmin-agent.log" >&2; exit 1; }
secret_dir=$(sed -n 's#.*path: \(.*aws-parameter-store\)$#\1#p' "$manifest")

cat >&2 <<TXT

The agent published the static Pod kubelet runs:
  $manifest
$(grep -E 'podmin.dev/(revision|identity-revision)|image:' "$manifest" | sed 's/^/    /')
Its workload identity (files 0444, selected by a symlink):
  $(ls -l "$identity/" | tail -n +2 | awk '{print $1, $NF}' | paste -sd ' ')
  $(openssl x509 -noout -subject -ext subjectAltName -in "$identity/tls.crt" 2>/dev/null | tr '\n' ' ')
Its secret, mounted read-only at /var/run/podmin/aws-parameter-store/greeting:
  $secret_dir/greeting
TXT

if [[ -n $stack ]]; then
  socket=$(readlink -f "$node_root/run/containerd")/containerd.sock
  crictl() { "$stack/crictl" --runtime-endpoint "unix://${socket}" --image-endpoint "unix://${socket}" "$@" 2>/dev/null; }
  echo "Waiting for kubelet to run both Pods…" >&2
  client=""
  for _ in $(seq 1 120); do
    client=$(crictl ps --name client --state Running -q | head -1)
    [[ -n $client && -n $(crictl ps --name web --state Running -q) ]] && break
    sleep 1
  done
  [[ -n $client ]] || { echo "the client Pod is not running; see $node_root/var/log/kubelet.log" >&2; exit 1; }
  printf '\n$ crictl exec %s /hello get http://web/      # inside the client Pod\n' "${client:0:12}" >&2
  answer=""
  for _ in $(seq 1 30); do
    if answer=$(crictl exec "$client" /hello get http://web/); then break; fi
    answer=""
    sleep 1
  done
  [[ -n $answer ]] || { echo "no answer through the Service; see $node_root/var/log/podmin-agent.log" >&2; exit 1; }
  echo "$answer"
  cat >&2 <<TXT

The client Pod called the Service by name: its resolver asked CoreDNS on the node address,
CoreDNS asked agent-dns, which answered web's VIP, and agent-dataplane's eBPF program on the
client's host veth carried the connection to the web Pod and the reply back from the VIP.
TXT
else
  cat >&2 <<TXT

Pods did not run here: this machine lacks ${missing}.
Without them the agent still publishes what kubelet would run (above).
TXT
fi
cat >&2 <<TXT

podmin-agent keeps running in the background. To use this demo cluster yourself:
  export XDG_CONFIG_HOME=$XDG_CONFIG_HOME XDG_CACHE_HOME=$XDG_CACHE_HOME XDG_DATA_HOME=$XDG_DATA_HOME
  node $root/dist/bin/podmin.cjs list
  node $root/dist/bin/podmin.cjs teardown      # stops the agent${stack:+ and the node stack}
TXT
