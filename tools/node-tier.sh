#!/usr/bin/env bash
# Node tier: an unmodified upstream kubelet runs what `podmin deploy` commits, on this machine.
# Builds (or reuses) the node stack with tools/node-stack/build.sh, builds the sandbox (pause)
# image and a small static HTTP server (tools/node-stack/hello, amd64 + arm64) from C with
# `podmin build`, pushes it, then `podmin setup` on the local provider starts the agent, mirrors
# the sandbox image to mirror/registry.k8s.io/pause and starts CoreDNS, containerd (Debian's
# runc) and kubelet in standalone mode on the agent's static-Pod directory. A deploy with a
# Service, a secret and a TCP readiness probe must become Running and Ready (crictl and the
# kubelet Pods API client), with identity and secret files readable inside the container and
# HTTP answering on the Pod's IPv6 address; CoreDNS on the node address answers the Service's
# VIP with TTL 5 (NXDOMAIN for an unknown name) and the Pod resolves the short names through its
# search list, its resolv.conf carrying the manifest's dnsConfig option ndots:2 beside the
# node's nameserver and search list (DESIGN §6.26); a static Pod with an exec readiness probe
# is a backend of a Service in the agent's snapshot exactly while Ready
# (readiness.node-spec.ts); a new tag rolls out with surge
# while requests through the Service every 50 ms keep being answered, and a revision whose
# readiness never passes halts at its progress deadline with the old Pod still serving;
# node receipts: `deploy --wait` returns once the Pod is Ready, a tag that cannot be pulled makes
# `--wait` fail with kubelet's reason, `--rollback-on-failure` brings the previous Pod back, and
# `status` shows each state; delete removes it and its files; `podmin install cloudflared` (a stand-in with the upstream
# image's layout, tools/node-stack/cloudflared, under the pin's name: the real image cannot be
# pulled here) mirrors the image, and its static Pod runs with the hardening in force (crictl
# inspect and the process's own /proc status: user 65532, read-only root, no new privileges,
# no capabilities) and the token mounted, without reaching Cloudflare; a re-run changes nothing;
# `podmin teardown` leaves no process, mount, address or interface behind.
# Prints `SKIPPED node: <reason>` where the machine cannot run it.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
# shellcheck source-path=SCRIPTDIR source=lib/tier-checks.sh
source tools/lib/tier-checks.sh node
need_root "containerd, runc and network namespaces"
need_tool runc "runc is not installed (tools/setup/apt-deps.sh installs it with containerd)"
need_tool gcc "gcc is needed to build the pause program"
need_tool aarch64-linux-gnu-gcc "aarch64-linux-gnu-gcc is needed for the arm64 workload (tools/setup/apt-deps.sh installs it)"
need_tool dig "dig is needed to query CoreDNS (tools/setup/apt-deps.sh installs bind9-dnsutils)"
[[ -d /sys/fs/cgroup ]] || skip "no cgroup hierarchy"
if ! out=$(bash tools/node-stack/build.sh 2>&1); then
  echo "$out" | tail -n 20 >&2
  skip "the node stack could not be built (see above)"
fi
stack="${PODMIN_NODE_STACK_DIR:-${PODMIN_DEV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/podmin-dev}/node-stack}/bin"
for b in podmin.cjs podmin-agent.cjs agent-registry.cjs agent-staticpod.cjs agent-identity.cjs agent-coordinator.cjs agent-dns.cjs agent-dataplane.cjs; do
  [[ -f dist/bin/$b ]] || skip "dist/bin/$b is missing (run npm run build)"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/podmin-node-tier.XXXXXX")
export XDG_CONFIG_HOME=$work/xdg/config XDG_DATA_HOME=$work/xdg/data XDG_CACHE_HOME=$work/xdg/cache
export PODMIN_NODE_STACK_BIN=$stack
podmin() { node "$root/dist/bin/podmin.cjs" "$@"; }
free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
json() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const v=new Function("o",`return o${process.argv[1]}`)(JSON.parse(s));console.log(v??"")})' "$1"; }
cleanup() {
  set +e
  podmin teardown >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
# Veths that exist before the node starts are not this tier's to judge.
veth_names() { ip -o link show type veth | awk -F': ' '{print $2}' | sed 's/@.*//' | sort; }
veth_names >"$work/veths-before"
registry_port=$(free_port)
health_port=$(free_port)
dns_port=$(free_port)
coordination_port=$(free_port)
export PODMIN_LOCAL_REGISTRY_LISTEN=127.0.0.1:${registry_port} PODMIN_LOCAL_HEALTH_ADDRESS=127.0.0.1:${health_port}
export PODMIN_LOCAL_DNS_LISTEN=127.0.0.1:${dns_port} PODMIN_LOCAL_COORDINATION_PORT=${coordination_port}

# Images from C: the sandbox (host platform) and the workload (amd64 + arm64, two tags).
mkdir -p "$work/pause" "$work/hello-v1" "$work/hello-v2"
gcc -static -Os -s -o "$work/pause/pause" tools/node-stack/pause/pause.c
cp tools/node-stack/pause/Containerfile "$work/pause/"
for v in v1 v2; do
  gcc -static -Os -s -o "$work/hello-$v/hello-amd64" tools/node-stack/hello/hello.c
  aarch64-linux-gnu-gcc -static -Os -s -o "$work/hello-$v/hello-arm64" tools/node-stack/hello/hello.c
  sed "s/^ENV GREETING=.*/ENV GREETING=hello-$v/" tools/node-stack/hello/Containerfile >"$work/hello-$v/Containerfile"
done
# The cloudflared stand-in: hello.c in the upstream image's layout.
mkdir -p "$work/cloudflared"
cp "$work/hello-v1/hello-amd64" "$work/hello-v1/hello-arm64" tools/node-stack/cloudflared/Containerfile "$work/cloudflared/"
cluster=node-tier
podmin connect "$cluster" --provider local >/dev/null 2>&1
bucket_dir=$(json ".contexts[\"$cluster\"].bucket" <"$XDG_CONFIG_HOME/podmin/config.json")
podmin build "$work/pause" -t registry.k8s.io/pause:3.10 >/dev/null 2>&1
for v in v1 v2; do
  podmin build "$work/hello-$v" -t "hello:$v" --platform linux/amd64 --platform linux/arm64 >/dev/null 2>&1
  podmin push "hello:$v" >/dev/null 2>&1
done

# Stored under the pin's upstream name, so the install mirrors it without a registry; the pin
# is pointed at its digest (PODMIN_TEST_CLOUDFLARED_PIN) because the real one is not this image.
podmin build "$work/cloudflared" -t docker.io/cloudflare/cloudflared:stand-in --platform linux/amd64 --platform linux/arm64 >/dev/null 2>&1
cloudflared_digest=$(json '.manifests.find((d) => (d.annotations || {})["org.opencontainers.image.ref.name"] === "stand-in").digest' \
  <"$XDG_CACHE_HOME/podmin/oci/docker.io/cloudflare/cloudflared/index.json")

node_root=$(podmin setup 2>"$work/setup.log") || { cat "$work/setup.log" >&2; exit 1; }
cat "$work/setup.log" >&2
node_address=$(json .nodeAddress <"$node_root/run/podmin/stack.json")

# What an operator does: a secret, a manifest with a Service and readiness probe, a deploy.
printf 'hello, node' | podmin secret create greeting --for hello --from-stdin >/dev/null 2>&1
(cd "$work" && podmin init hello -g default --image hello:v1 --service --port 80:8080 >/dev/null 2>&1)
# A resolver option of the Pod's own (DESIGN §6.26): the node keeps it beside its cluster DNS.
sed -i -e 's#^    metadata:#    metadata:\n      annotations:\n        podmin.dev/aws-parameter-store: greeting#' \
  -e 's#^      nodeSelector:#      dnsConfig:\n        options:\n          - name: ndots\n            value: "2"\n      nodeSelector:#' "$work/daemonset.yaml"
podmin deploy hello -g default -f "$work/daemonset.yaml" >/dev/null 2>&1
deployed_at=$(date +%s%3N)
hello_vip=$(podmin list -o json 2>/dev/null | json '.find((r) => r.name === "hello").vip')

socket=$(readlink -f "$node_root/run/containerd")/containerd.sock
crictl() { "$stack/crictl" --runtime-endpoint "unix://${socket}" --image-endpoint "unix://${socket}" "$@" 2>/dev/null; }
passed=0 failed=0 failed_checks=()
# Every check's time goes to stderr; the failed ones are named again in the tier's last lines.
check() {
  local started=$SECONDS
  if "$@"; then
    passed=$((passed + 1))
    echo "node tier: ok: $* ($((SECONDS - started)) s)" >&2
  else
    failed=$((failed + 1))
    failed_checks+=("$*")
    echo "node tier: FAILED: $* ($((SECONDS - started)) s)" >&2
  fi
}
wait_for() { # seconds command...
  local n=$1
  shift
  for _ in $(seq 1 "$n"); do
    if "$@"; then return 0; fi
    sleep 1
  done
  return 1
}

# kubelet's Pods API through the client library: Ready, Running, IPv6, by list, get and watch.
report=$work/pods-api.json
pods_api() {
  PODMIN_NODE_TIER_PODS_SOCKET=$node_root/var/lib/kubelet/pods-api/pods-api.sock \
    PODMIN_NODE_TIER_POD=hello-default PODMIN_NODE_TIER_DEPLOYED_AT=$deployed_at \
    PODMIN_NODE_TIER_REPORT=$report \
    npx jest -c libs/agent/data-access-kubelet-pods/jest.node.config.cjs --ci 2>&1 | sed 's/^/  /'
  [[ ${PIPESTATUS[0]} -eq 0 ]]
}
check pods_api

# The coordinator's readiness watch: a static Pod whose exec probe the spec flips from the host,
# and through the agent, the backends of a Service selecting it in dns/services.pb and its DNS.
readiness() {
  PODMIN_NODE_TIER_PODS_SOCKET=$node_root/var/lib/kubelet/pods-api/pods-api.sock \
    PODMIN_NODE_TIER_MANIFESTS=$node_root/etc/podmin/manifests \
    PODMIN_NODE_TIER_IMAGE=registry.podmin.internal/apps/hello:v1 \
    PODMIN_NODE_TIER_BUCKET=$bucket_dir PODMIN_NODE_TIER_CLUSTER=$cluster \
    PODMIN_NODE_TIER_NODE_ADDRESS=$node_address \
    PODMIN_NODE_TIER_CRICTL=$stack/crictl PODMIN_NODE_TIER_CRI_SOCKET=$socket \
    npx jest -c libs/agent/feature-coordinator/jest.node.config.cjs --ci 2>&1 | sed 's/^/  /'
  [[ ${PIPESTATUS[0]} -eq 0 ]]
}
check readiness
ready_ms=$(json .readyMs <"$report" 2>/dev/null || echo "?")
pod_ip=$(json .podIP <"$report" 2>/dev/null || true)

running() { [[ -n $(crictl ps --name hello --state Running -q) ]]; }
sandbox_ready() { [[ -n $(crictl pods --name hello --state Ready -q) ]]; }
pulled_through_registry() {
  local images
  images=$(crictl images)
  grep -q "registry.podmin.internal/mirror/registry.k8s.io/pause" <<<"$images" && grep -q "registry.podmin.internal/apps/hello" <<<"$images"
}
multi_platform() {
  curl -fsS -H 'Accept: application/vnd.oci.image.index.v1+json' "http://127.0.0.1:${registry_port}/v2/apps/hello/manifests/v1" |
    node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const a=JSON.parse(s).manifests.map(m=>m.platform&&m.platform.architecture).sort().join(",");process.exit(a==="amd64,arm64"?0:1)})'
}
check running
check sandbox_ready
check pulled_through_registry
check multi_platform
cid=$(crictl ps --name '^hello$' --label io.kubernetes.pod.name=hello-default --state Running -q | head -1)
in_container() { crictl exec "$cid" /hello cat "$@"; }
tls=/var/run/secrets/podmin.dev/tls
identity_readable() {
  in_container "$tls/tls.crt" >"$work/tls.crt" && in_container "$tls/ca.crt" >"$work/ca.crt" &&
    grep -q 'BEGIN PRIVATE KEY' <<<"$(in_container "$tls/tls.key")"
}
certificate_names_pod() {
  openssl x509 -in "$work/tls.crt" -noout -subject -ext subjectAltName >"$work/cert.txt" &&
    grep -q 'CN *= *hello' "$work/cert.txt" &&
    grep -q 'URI:spiffe://node-tier.podmin.internal/ns/default/pod/hello' "$work/cert.txt" &&
    openssl verify -CAfile "$work/ca.crt" "$work/tls.crt" >/dev/null
}
secret_readable() { [[ $(in_container /var/run/podmin/aws-parameter-store/greeting) == "hello, node" ]]; }
resolver_is_coredns() { grep -q "^nameserver ${node_address}$" <<<"$(in_container /etc/resolv.conf)"; }
# The manifest's dnsConfig.options kept next to the node's nameserver and search list.
resolver_keeps_options() {
  local conf
  conf=$(in_container /etc/resolv.conf)
  if grep -Eq '^options(.* )?ndots:2( |$)' <<<"$conf" &&
    grep -q '^search default.svc.cluster.local svc.cluster.local cluster.local$' <<<"$conf"; then
    return 0
  fi
  echo "  /etc/resolv.conf of the hello Pod:" >&2
  sed 's/^/    /' <<<"$conf" >&2
  return 1
}
# dns NAME: "<status>" then the answer records as "name ttl class type data", through CoreDNS.
dns() {
  dig +time=2 +tries=1 +noall +comments +answer @"${node_address}" "$1" AAAA |
    awk '/status:/ { sub(/.*status: /, ""); sub(/,.*/, ""); print; next } !/^;/ && NF { print $1, $2, $3, $4, $5 }'
}
coredns_answers() {
  [[ -n $hello_vip && $(dns hello.default.svc.cluster.local) == "NOERROR"$'\n'"hello.default.svc.cluster.local. 5 IN AAAA ${hello_vip}" ]]
}
coredns_nxdomain() { [[ $(dns nope.default.svc.cluster.local) == NXDOMAIN ]]; }
# Inside the Pod, through its resolv.conf search list (hello.c's stub resolver, which reads the
# Pod's ndots:2: both names are tried with the search list first).
pod_resolves() {
  local got
  got=$("$stack/crictl" --runtime-endpoint "unix://${socket}" exec "$cid" /hello resolve "$1" 2>"$work/resolve.err")
  [[ -n $hello_vip && $got == "$hello_vip" ]] || {
    echo "  resolve $1: got '${got}', want '${hello_vip}'" >&2
    sed 's/^/  /' "$work/resolve.err" >&2
    return 1
  }
}
http_answers() { # ip greeting
  [[ -n $1 ]] && grep -q "^$2 from " <<<"$(curl -fs -g --max-time 5 "http://[$1]:8080/")"
}
check identity_readable
check certificate_names_pod
check secret_readable
check resolver_is_coredns
check resolver_keeps_options
check coredns_answers
check coredns_nxdomain
check pod_resolves hello
check pod_resolves hello.default
check http_answers "$pod_ip" hello-v1
# Container logs: `podmin logs` finds the hello Pod's CRI log file kubelet writes on this node.
logs_show_serving() {
  podmin logs hello -g default --tail 5 2>"$work/logs.err" | grep -q '^hello: serving "hello-v1"' || {
    echo "  podmin logs hello: $(tail -n 3 "$work/logs.err")" >&2
    return 1
  }
}
check logs_show_serving
# Log export's name mapping (Fluent Bit's configuration uses the same pattern): kubelet's
# /var/log/containers link of the running hello container names its Pod, namespace and ID.
log_names_map() {
  PODMIN_NODE_TIER_CONTAINER_ID=$(crictl ps --name hello --state Running -q | head -1) \
    PODMIN_NODE_TIER_POD=hello-default \
    npx jest -c libs/agent/util-fluent-bit/jest.node.config.cjs --ci 2>&1 | sed 's/^/  /'
  [[ ${PIPESTATUS[0]} -eq 0 ]]
}
check log_names_map

# Services end to end: from inside another Pod, `http://hello/` goes through the Pod's resolver
# (CoreDNS, then agent-dns) to the VIP, and agent-dataplane's eBPF program on the client's host
# veth carries the connection to the hello Pod and the reply back from the VIP.
mkdir -p "$work/client"
(cd "$work/client" && podmin init client -g default --image hello:v1 >/dev/null 2>&1)
podmin deploy client -g default -f "$work/client/daemonset.yaml" >/dev/null 2>&1
client_cid() { crictl ps --name client --state Running -q | head -1; }
client_running() { [[ -n $(client_cid) ]]; }
check wait_for 120 client_running
through_service() {
  local got
  got=$("$stack/crictl" --runtime-endpoint "unix://${socket}" exec "$(client_cid)" /hello get http://hello/ 2>"$work/get.err")
  [[ $got == "$1 from "* ]] || {
    echo "  get http://hello/ from the client Pod: '${got}' $(grep 'hello get' "$work/get.err")" >&2
    return 1
  }
}
check wait_for 60 through_service hello-v1
if ! through_service hello-v1 2>/dev/null; then
  grep 'dataplane' "$node_root/var/log/podmin-agent.log" | tail -n 20 >&2
  ip -6 route show | grep -v '^fe80' >&2
fi

# RSS of the node's long-running processes with a Pod running.
rss_of() { ps -o rss= -p "$1" 2>/dev/null | awk '{s+=$1} END {printf "%.0f", s/1024}'; }
read -r kubelet_pid containerd_pid coredns_pid < <(json '.pids.join(" ")' <"$node_root/run/podmin/stack.json")
agent_pid=$(cat "$node_root/run/podmin/agent.pid")
agent_pids=$(
  echo "$agent_pid"
  pgrep -P "$agent_pid"
)
agent_count=$(echo "$agent_pids" | wc -l)
agent_pids=$(echo "$agent_pids" | paste -sd, -)
agent_rss=$(ps -o rss= -p "$agent_pids" | awk '{s+=$1} END {printf "%.0f", s/1024}')
rss_line="kubelet $(rss_of "$kubelet_pid") MiB, containerd $(rss_of "$containerd_pid") MiB, CoreDNS $(rss_of "$coredns_pid") MiB, podmin-agent (${agent_count} processes) ${agent_rss} MiB"

# A new tag replaces the Pod without downtime: `podmin init` wrote maxSurge 1, maxUnavailable 0,
# so the new Pod starts beside the old one, and the old one leaves the Service's backends and
# then goes once the new one is available. Requests from inside the client Pod's network
# namespace to the Service's VIP every 50 ms (bounded: at most 2,400, stopped by a file) must
# succeed within 3 s. A request slower than 0.9 s is counted apart: about one new connection in
# a hundred through the VIP has its first SYN retried after 1 s, with or without a rollout
# (measured on the demo node: 6 of 700, none on the Pod's own address), and rarely one gets no
# answer at all; so the check is that the Service never went away: no two requests in a row
# failed and at most one failed in all. The exact counts are printed with the measurements.
client_netns() {
  crictl inspectp "$(crictl pods --name client --state Ready -q | head -1)" |
    json '.info.runtimeSpec.linux.namespaces.find((n) => n.type === "network").path'
}
request_loop() { # netns output: one line per request, "<ms> ok <greeting> <ms taken>" or "<ms> fail curl-exit-N"
  local body rc started
  for _ in $(seq 1 2400); do
    [[ -e $work/loop.stop ]] && break
    rc=0
    started=$(date +%s%3N)
    body=$(nsenter --net="$1" curl -fs -g --max-time 3 "http://[${hello_vip}]/" 2>/dev/null) || rc=$?
    if [[ $rc -eq 0 ]]; then
      echo "$(date +%s%3N) ok ${body%% from *} $(($(date +%s%3N) - started))"
    else
      echo "$(date +%s%3N) fail curl-exit-${rc}"
    fi
    sleep 0.05
  done >"$2"
}
loop_netns=$(client_netns)
rm -f "$work/loop.stop"
request_loop "$loop_netns" "$work/loop.txt" &
loop_pid=$!
sleep 2
replaced_at=$(date +%s%3N)
podmin deploy hello -g default -f "$work/daemonset.yaml" --image hello:v2 --wait --timeout 3m >/dev/null 2>"$work/surge.err" || cat "$work/surge.err" >&2
sleep 3
touch "$work/loop.stop"
wait "$loop_pid" || true
loop_total=$(wc -l <"$work/loop.txt")
loop_failed=$(grep -c ' fail ' "$work/loop.txt" || true)
first_v2=$(awk '$3 == "hello-v2" { print $1; exit }' "$work/loop.txt")
slow() { awk '$2 == "ok" && $4 >= 900' "$1" | wc -l; }
# The Service stayed up: at most one request failed, and never two in a row.
stayed_up() { awk '$2 == "fail" { n++; if (prev) run = 1 } { prev = ($2 == "fail") } END { exit !(n <= 1 && !run) }' "$1"; }
# When the agent published the new revision's Pod beside the old one (the node applying it).
surge_applied=$(node -e '
  const lines = require("fs").readFileSync(process.argv[1], "utf8").split("\n");
  for (const l of lines) { try { const o = JSON.parse(l); const t = Date.parse(o.time ?? o.ts ?? "");
    if (o.service === "agent-staticpod" && o.msg === "reconcile" && /^published [1-9]/.test(o.result ?? "") && t >= Number(process.argv[2])) { console.log(t); break; } } catch {} }
' "$node_root/var/log/podmin-agent.log" "$replaced_at")
surge_serving_ms=$(( ${first_v2:-0} - ${surge_applied:-0} ))
surge_stayed_up() {
  if [[ $loop_total -gt 100 ]] && stayed_up "$work/loop.txt" && grep -q ' ok hello-v1 ' "$work/loop.txt" && [[ -n $first_v2 ]]; then return 0; fi
  echo "  requests: ${loop_total}, failed: ${loop_failed}, first hello-v2 at ${first_v2:-never}" >&2
  awk 'NR == 1 { t0 = $1 } / fail / { print "  +" $1 - t0 " ms " $3 }' "$work/loop.txt" | head -n 5 >&2
  return 1
}
check surge_stayed_up

# A revision whose readiness never passes halts at its progress deadline (20 s here): the surge
# Pod goes, the old one never stops serving, `deploy --wait` exits 1 naming the node and
# `status` shows the halt.
sed -e 's/^\( *\)port: 8080$/\1port: 8089/' \
  -e '0,/^  name: hello$/s//  name: hello\n  annotations:\n    podmin.dev\/progress-deadline: 20s/' \
  "$work/daemonset.yaml" >"$work/never-ready.yaml"
rm -f "$work/loop.stop"
request_loop "$loop_netns" "$work/loop-halt.txt" &
loop_pid=$!
sleep 1
never_err=$work/never-ready.err
never_rc=0
podmin deploy hello -g default -f "$work/never-ready.yaml" --image hello:v2 --wait --timeout 3m >/dev/null 2>"$never_err" || never_rc=$?
sleep 2
touch "$work/loop.stop"
wait "$loop_pid" || true
halt_failed=$(grep -c ' fail ' "$work/loop-halt.txt" || true)
wait_names_halt() {
  if [[ $never_rc -eq 1 ]] && grep -q 'rollout halted: node [^ ]*: ' "$never_err"; then return 0; fi
  echo "  deploy --wait exited ${never_rc}:" >&2
  sed 's/^/  /' "$never_err" >&2
  return 1
}
check wait_names_halt
old_pod_served() {
  if stayed_up "$work/loop-halt.txt" && [[ $(grep -c ' ok hello-v2 ' "$work/loop-halt.txt") -gt 50 ]]; then return 0; fi
  echo "  requests: $(wc -l <"$work/loop-halt.txt"), failed: ${halt_failed} (ms after the loop began):" >&2
  awk 'NR == 1 { t0 = $1 } / fail / { print "  +" $1 - t0 " ms (" $1 ") " $3 }' "$work/loop-halt.txt" | head -n 5 >&2
  grep -E '"msg":"(reconcile|admit node|halt rollout|write snapshot|attach dataplane|detach dataplane|program Service maps)"' "$node_root/var/log/podmin-agent.log" | tail -n 20 >&2
  return 1
}
check old_pod_served
status_shows_halt() {
  if podmin status hello -g default 2>/dev/null | grep -q '^hello rollout to [0-9a-f]\{12\}: .*; halted: [^ ]*: '; then return 0; fi
  podmin status hello -g default >&2
  return 1
}
check status_shows_halt
new_ip() { crictl inspectp "$(crictl pods --name hello --state Ready -q | head -1)" | json '.status.network.ip' 2>/dev/null; }
serves_v2() { local ip; ip=$(new_ip) && http_answers "$ip" hello-v2; }
check wait_for 120 serves_v2
replace_ms=$(($(date +%s%3N) - replaced_at))
# New connections through the Service reach the new Pod.
check wait_for 60 through_service hello-v2
one_running() { [[ $(crictl ps --name hello --state Running -q | wc -l) -eq 1 ]] && [[ $(crictl ps --name hello --state Running -q) != "$cid" ]]; }
check wait_for 60 one_running

# Receipts: `deploy --wait` returns once kubelet reports the Pod Ready on the node; `status`
# (bucket only) shows each state; an unpullable tag fails the wait with kubelet's reason, and
# --rollback-on-failure puts the previous entry back and waits for it.
wait_err=$work/wait.err
deploy_wait() { podmin deploy hello -g default -f "$work/daemonset.yaml" "$@" >/dev/null 2>"$wait_err"; }
# A failed wait's own words, now and again at the end (see failures below).
show_wait() { sed 's/^/  /' "$wait_err" | tee -a "$work/failures.log" >&2; }
status_json() { podmin status hello -g default -o json 2>/dev/null; }
node_field() { status_json | json "[0].nodes[0].$1"; }
waited_ready() {
  if deploy_wait --image hello:v1 --wait --timeout 3m && grep -q '^Ready: hello [0-9a-f]\{12\}: 1/1 nodes ready' "$wait_err"; then return 0; fi
  show_wait
  return 1
}
wait_started=$(date +%s%3N)
check waited_ready
wait_ms=$(($(date +%s%3N) - wait_started))
good_rev=$(status_json | json '[0].desired')
status_ready() {
  if [[ $(node_field state) == ready && $(node_field applied) == "$good_rev" && $(node_field ready) == true ]] &&
    podmin status 2>/dev/null | grep -q '^hello: 1/1 ready$'; then return 0; fi
  status_json >&2
  return 1
}
check status_ready
pull_reason='(ErrImagePull|ImagePullBackOff) \(container hello\)'
# Long enough for the old Pod to stop, the pull to fail, and the receipt to say so: a
# replacement takes 20-30 s here and receipts are written at most every 10 s. The rollback's
# own wait has the same bound.
pull_wait=75
# The preflight refuses an unpublished tag at the desk; the pull-failure checks below skip it
# (--no-preflight --no-pin) to make a node meet a tag that cannot be pulled.
preflight_refuses_missing() {
  if ! deploy_wait --image hello:missing && grep -q 'hello:missing is not published' "$wait_err"; then return 0; fi
  show_wait
  return 1
}
check preflight_refuses_missing
rolled_back() {
  if ! deploy_wait --no-preflight --no-pin --image hello:missing --wait --timeout ${pull_wait}s --rollback-on-failure &&
    grep -Eq "not ready after ${pull_wait} s on [^ ]+ \(${pull_reason}" "$wait_err" &&
    grep -q "rolled back to ${good_rev}, and that is done" "$wait_err"; then return 0; fi
  show_wait
  return 1
}
check rolled_back
check status_ready
serves_v1() { local ip; ip=$(new_ip) && http_answers "$ip" hello-v1; }
check wait_for 60 serves_v1
wait_fails_on_pull() {
  if ! deploy_wait --no-preflight --no-pin --image hello:missing --wait --timeout ${pull_wait}s &&
    grep -Eq "not ready after ${pull_wait} s on [^ ]+ \(${pull_reason}" "$wait_err"; then return 0; fi
  show_wait
  return 1
}
check wait_fails_on_pull
status_shows_pull() {
  if [[ $(node_field state) == not-ready && $(node_field applied) != "$good_rev" ]] && grep -Eq "^${pull_reason}" <<<"$(node_field reason)" &&
    podmin status 2>/dev/null | grep -q '^hello: 0/1 ready (1 not ready)$'; then return 0; fi
  status_json >&2
  return 1
}
check status_shows_pull

# Delete: the Pod goes, and with it its manifest, identity and secret files.
manifest_files() { [[ -n $(find "$node_root/etc/podmin/manifests" -name '*hello*') ]]; }
files_present() { manifest_files && [[ -d $node_root/run/podmin/workloads/hello/identity && -d $node_root/run/podmin/workloads/hello/secrets ]]; }
check files_present
podmin delete hello -g default >/dev/null 2>&1
pod_gone() { ! running && ! sandbox_ready; }
files_gone() { ! manifest_files && [[ ! -e $node_root/run/podmin/workloads/hello ]]; }
check wait_for 90 pod_gone
check wait_for 30 files_gone

# podmin install cloudflared: token first, then the install; the runtime's view of the Pod.
cloudflared_token=node-tier-stand-in-token
token_mount=/var/run/podmin/aws-parameter-store/tunnel-token
printf %s "$cloudflared_token" | podmin secret create tunnel-token --for cloudflared -n platform-cloudflared --from-stdin >/dev/null 2>&1
install_cloudflared() { PODMIN_TEST_CLOUDFLARED_PIN="stand-in@${cloudflared_digest}" podmin install cloudflared -g default 2>&1; }
desired_bytes() { (cd "$bucket_dir" && find deployments mirror nodegroups -type f -exec sha256sum {} + | sort); }
installed=$(install_cloudflared) || true
cloudflared_committed() { grep -q "^Committed: default/cloudflared" <<<"$installed" || { printf '%s\n' "$installed" >&2; return 1; }; }
cloudflared_listed() { podmin list 2>/dev/null | grep -Eq '^cloudflared +platform-cloudflared +default +- +install/cloudflared *$'; }
cloudflared_running() { [[ -n $(crictl ps --name cloudflared --state Running -q) ]]; }
check cloudflared_committed
check cloudflared_listed
check wait_for 120 cloudflared_running
cf=$(crictl ps --name cloudflared --state Running -q | head -1)
# The OCI runtime spec containerd gave runc: user, read-only root, no_new_privs, no capabilities, the args.
cloudflared_spec_hardened() {
  crictl inspect "$cf" | TOKEN_MOUNT=$token_mount node -e '
    let s = "";
    process.stdin.on("data", (d) => (s += d)).on("end", () => {
      const spec = JSON.parse(s).info.runtimeSpec;
      const caps = spec.process.capabilities ?? {};
      const problems = [];
      if (spec.process.user.uid !== 65532 || spec.process.user.gid !== 65532) problems.push(`user ${JSON.stringify(spec.process.user)}`);
      if (spec.root.readonly !== true) problems.push("root not read-only");
      if (spec.process.noNewPrivileges !== true) problems.push("new privileges allowed");
      for (const set of ["bounding", "effective", "permitted", "inheritable", "ambient"]) {
        if ((caps[set] ?? []).length > 0) problems.push(`${set} capabilities ${caps[set].join(",")}`);
      }
      const args = ["/usr/local/bin/cloudflared", "tunnel", "--no-autoupdate", "--metrics", "0.0.0.0:2000", "run", "--token-file", process.env.TOKEN_MOUNT];
      if (JSON.stringify(spec.process.args) !== JSON.stringify(args)) problems.push(`args ${JSON.stringify(spec.process.args)}`);
      for (const p of problems) console.error(`  cloudflared: ${p}`);
      process.exit(problems.length === 0 ? 0 : 1);
    });'
}
# The running process's own view, from inside the container.
in_cloudflared() { crictl exec "$cf" /usr/local/bin/cloudflared cat "$@"; }
cloudflared_process_hardened() {
  local status
  status=$(in_cloudflared /proc/1/status) &&
    grep -Eq '^Uid:\s+65532\s+65532\s+65532\s+65532$' <<<"$status" &&
    grep -Eq '^NoNewPrivs:\s+1$' <<<"$status" &&
    grep -Eq '^CapEff:\s+0+$' <<<"$status" && grep -Eq '^CapPrm:\s+0+$' <<<"$status" &&
    grep -Eq '^CapBnd:\s+0+$' <<<"$status" &&
    awk '$2 == "/" { split($4, o, ","); if (o[1] == "ro") found = 1 } END { exit !found }' <<<"$(in_cloudflared /proc/1/mounts)"
}
cloudflared_token_mounted() { [[ $(in_cloudflared "$token_mount") == "$cloudflared_token" ]]; }
check cloudflared_spec_hardened
check cloudflared_process_hardened
check cloudflared_token_mounted
before_rerun=$(desired_bytes)
reinstalled=$(install_cloudflared) || true
cloudflared_rerun_unchanged() {
  grep -q "^Already committed (unchanged): default/cloudflared" <<<"$reinstalled" && grep -q "already mirrored" <<<"$reinstalled" &&
    [[ $(desired_bytes) == "$before_rerun" ]]
}
check cloudflared_rerun_unchanged
podmin delete cloudflared -g default >/dev/null 2>&1
cloudflared_gone() { [[ -z $(crictl ps --name cloudflared -q) ]]; }
check wait_for 90 cloudflared_gone

short=$(dirname "$(dirname "$socket")")
# In a shell that no longer has PODMIN_NODE_STACK_BIN, as after the demo: the node stack's own
# record says which crictl removes the Pods.
env -u PODMIN_NODE_STACK_BIN node "$root/dist/bin/podmin.cjs" teardown >"$work/teardown.log" 2>&1 || true
sed "s/^/  teardown: /" "$work/teardown.log" >&2
# Each kind of stray is named on stderr, so a failure says what was left.
no_strays() {
  local strays=()
  pgrep -af "$node_root|$short" >"$work/strays" && strays+=("processes: $(tr '\n' ';' <"$work/strays")")
  grep -e " $node_root" -e " $short" /proc/mounts >"$work/strays" && strays+=("mounts: $(awk '{print $2}' "$work/strays" | tr '\n' ' ')")
  veth_names | comm -23 - "$work/veths-before" >"$work/strays"
  [[ -s $work/strays ]] && strays+=("veths: $(tr '\n' ' ' <"$work/strays")")
  [[ -e $short ]] && strays+=("directory $short")
  grep -q "${node_address}/128" <<<"$(ip -6 addr show dev lo)" && strays+=("address ${node_address} on lo")
  # Teardown's last resort (deleting a Pod network containerd left) must not have been needed.
  grep -q "Warning" "$work/teardown.log" && strays+=("teardown warned: $(grep Warning "$work/teardown.log")")
  for s in "${strays[@]}"; do echo "  stray: $s" >&2; done
  [[ ${#strays[@]} -eq 0 ]]
}
check no_strays
if [[ $failed -gt 0 ]]; then
  for f in kubelet containerd coredns podmin-agent; do
    echo "--- $f.log (tail)" >&2
    tail -n 12 "$node_root/var/log/$f.log" >&2
  done
fi
echo "node: measured: surge rollout: ${loop_total} requests every 50 ms, ${loop_failed} failed, $(slow "$work/loop.txt") slower than 0.9 s; applied → new Pod serving ${surge_serving_ms} ms (budget 5000); never-ready revision: halted, ${halt_failed} failed of $(wc -l <"$work/loop-halt.txt"), $(slow "$work/loop-halt.txt") slower than 0.9 s"
echo "node: measured: deploy → Pod Ready ${ready_ms} ms (kubelet's Ready transition, 1 s resolution); new tag → serving ${replace_ms} ms; deploy --wait → Ready in receipt ${wait_ms} ms; RSS ${rss_line}"
if [[ $failed -gt 0 && -s $work/failures.log ]]; then tail -n 20 "$work/failures.log" >&2; fi
for c in "${failed_checks[@]}"; do echo "node tier: FAILED: $c" >&2; done
echo "node: kubelet $("$stack/kubelet" --version | awk '{print $2}') ran the deployed Pods from podmin's registry: $passed checks passed, $failed failed"
echo "Tests: ${failed:+$failed failed, }$passed passed, $((passed + failed)) total" | sed 's/^Tests: 0 failed, /Tests: /'
[[ $failed -eq 0 ]]
