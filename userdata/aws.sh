#!/usr/bin/env bash
# Podmin node bootstrap for AWS: rendered by the podmin CLI into deterministic gzip user-data.
# Everything between the render markers is replaced by validated values; the defaults below
# only serve linting and the bats tests (which source this file: main runs only when executed).
# Comments and blank lines are stripped from the rendered script, so comment freely.
set -euo pipefail

# @podmin:render-begin
cluster='example'
nodegroup='default'
bucket='podmin-example'
region='us-east-1'
arch='amd64'
pause_image='registry.podmin.internal/mirror/registry.k8s.io/pause@sha256:0000000000000000000000000000000000000000000000000000000000000000'
system_reserved_cpu='100m'
system_reserved_memory='496Mi'
workload_ca_publish=''
dependencies=(
  'containerd.tar.gz|dependencies/containerd/containerd-v0.0.0-linux-amd64.tar.gz|sha256:0000000000000000000000000000000000000000000000000000000000000000'
)
# @podmin:render-end

# Log export is off unless the render block set these (setup --otel-logs: the endpoint, the
# transport, mtls, the ca= object, the headers secret's provider and the packages' rows, which
# carry a size besides the digest).
otel_logs_endpoint="${otel_logs_endpoint:-}"
otel_logs_protocol="${otel_logs_protocol:-http}"
otel_logs_mtls="${otel_logs_mtls:-false}"
otel_logs_ca="${otel_logs_ca:-}"
otel_logs_headers_provider="${otel_logs_headers_provider:-}"
[[ -v otel_logs_packages ]] || otel_logs_packages=()

# Test seams: a root prefix for every written path, the IMDS base URL, the retry delay and
# the S3 and EC2 endpoints (emulators on loopback). Cloud-init runs user-data with none set.
root="${PODMIN_TEST_ROOT:-}"
imds="${PODMIN_TEST_IMDS:-http://[fd00:ec2::254]}"
retry_delay="${PODMIN_TEST_RETRY_DELAY:-3}"
s3_endpoint="${PODMIN_TEST_S3_ENDPOINT:-https://s3.dualstack.${region}.amazonaws.com}"
ec2_endpoint="${PODMIN_TEST_EC2_ENDPOINT:-https://ec2.${region}.api.aws}"

downloads="${root}/opt/podmin/downloads"
canonical="${root}/opt/podmin/dependencies"
pod_route_table=180

log() {
  printf 'podmin-bootstrap: %s\n' "$*" >&2
}

die() {
  log "error: $*"
  exit 1
}

# retry ATTEMPTS COMMAND...: runs COMMAND until it succeeds, doubling the delay each time.
retry() {
  local attempts=$1 delay=$retry_delay attempt=1
  shift
  until "$@"; do
    if ((attempt >= attempts)); then
      log "giving up after ${attempts} attempts: $*"
      return 1
    fi
    log "attempt ${attempt} of ${attempts} failed; retrying in ${delay}s: $*"
    sleep "$delay"
    attempt=$((attempt + 1))
    delay=$((delay * 2))
  done
}

# write_file PATH MODE: writes stdin to ${root}PATH atomically with MODE.
write_file() {
  local target="${root}$1" mode=$2 temp
  mkdir -p "$(dirname "$target")"
  temp="$(mktemp "${target}.XXXXXX")"
  cat >"$temp"
  chmod "$mode" "$temp"
  mv -f "$temp" "$target"
}

imds_token=''

# Takes one IMDSv2 session token; imds_get runs in command substitutions, so it cannot.
imds_login() {
  imds_token="$(curl -fsS --retry 5 -X PUT -H 'X-aws-ec2-metadata-token-ttl-seconds: 21600' "${imds}/latest/api/token")"
  [[ -n $imds_token ]] || die 'IMDS returned no session token'
}

imds_get() {
  curl -fsS --retry 5 -H "X-aws-ec2-metadata-token: ${imds_token}" "${imds}/latest/meta-data/$1"
}

# A global-unicast IPv6 address (2000::/3) without a prefix length.
is_global_ipv6() {
  [[ $1 =~ ^[23][0-9a-f]{0,3}(:[0-9a-f]{0,4}){2,7}$ ]]
}

# A global-unicast IPv6 /80 as AWS writes delegated prefixes (zero tail compressed).
is_prefix80() {
  [[ $1 =~ ^[23][0-9a-f]{0,3}(:[0-9a-f]{1,4}){0,4}::/80$ ]]
}

primary_mac=''
secondary_mac=''
secondary_eni=''
node_address=''
secondary_address=''

# Reads the primary (device 0) and secondary (device 1) ENIs and the node address from IMDS.
discover_network() {
  local mac device
  imds_login
  # IMDS ends a listing without a newline: the last line must count too.
  while read -r mac || [[ -n $mac ]]; do
    mac="${mac%/}"
    [[ -n $mac ]] || continue
    device="$(imds_get "network/interfaces/macs/${mac}/device-number")"
    case "$device" in
      0) primary_mac=$mac ;;
      1) secondary_mac=$mac ;;
    esac
  done < <(imds_get 'network/interfaces/macs/')
  [[ -n $primary_mac ]] || die 'IMDS lists no primary network interface'
  [[ -n $secondary_mac ]] || die 'IMDS lists no secondary network interface for Pods'
  node_address="$(imds_get "network/interfaces/macs/${primary_mac}/ipv6s" | head -n 1)"
  is_global_ipv6 "$node_address" || die "primary interface has no global IPv6 address (got '${node_address}')"
  secondary_eni="$(imds_get "network/interfaces/macs/${secondary_mac}/interface-id")"
  [[ $secondary_eni =~ ^eni-[0-9a-f]+$ ]] || die "bad secondary interface id '${secondary_eni}'"
  secondary_address="$(imds_get "network/interfaces/macs/${secondary_mac}/ipv6s" 2>/dev/null | head -n 1 || true)"
  log "node address ${node_address}; Pod interface ${secondary_eni}"
}

# The Linux interface name carrying MAC.
interface_for_mac() {
  local wanted=$1 name
  name="$(ip -o link show | awk -v mac="$wanted" '{ for (i = 1; i < NF; i++) if ($i == "link/ether" && $(i + 1) == mac) { sub(":$", "", $2); print $2; exit } }')"
  [[ -n $name ]] || die "no network interface with MAC ${wanted}"
  printf '%s\n' "$name"
}

ec2() {
  aws ec2 "$@" --region "$region" --endpoint-url "$ec2_endpoint" --output text
}

# Address before prefix: the secondary ENI keeps (or gets) its one ordinary IPv6 address first.
ensure_secondary_address() {
  if [[ -z $secondary_address ]]; then
    secondary_address="$(retry 5 ec2 describe-network-interfaces --network-interface-ids "$secondary_eni" \
      --query 'NetworkInterfaces[0].Ipv6Addresses[0].Ipv6Address')" || die "cannot describe ${secondary_eni}"
  fi
  if [[ -z $secondary_address || $secondary_address == None ]]; then
    secondary_address="$(ec2 assign-ipv6-addresses --network-interface-id "$secondary_eni" \
      --ipv6-address-count 1 --query 'AssignedIpv6Addresses[0]')"
  fi
  is_global_ipv6 "$secondary_address" || die "secondary interface address '${secondary_address}' is not global IPv6"
}

pod_prefix=''

# Reuses the secondary ENI's delegated /80 or assigns exactly one.
ensure_pod_prefix() {
  local listed existing
  # A failed lookup must stop here: guessing "none" would assign a second prefix.
  listed="$(retry 5 ec2 describe-network-interfaces --network-interface-ids "$secondary_eni" \
    --query 'NetworkInterfaces[0].Ipv6Prefixes[].Ipv6Prefix')" || die "cannot list the prefixes of ${secondary_eni}"
  existing="$(tr '\t ' '\n' <<<"$listed" | grep -v -e '^None$' -e '^$' | sort || true)"
  if [[ -n $existing ]]; then
    pod_prefix="$(head -n 1 <<<"$existing")"
    if (($(wc -l <<<"$existing") > 1)); then
      log "warning: ${secondary_eni} has several delegated prefixes; using ${pod_prefix}"
    fi
    log "reusing Pod prefix ${pod_prefix}"
  else
    pod_prefix="$(ec2 assign-ipv6-addresses --network-interface-id "$secondary_eni" \
      --ipv6-prefix-count 1 --query 'AssignedIpv6Prefixes[0]')"
    log "assigned Pod prefix ${pod_prefix}"
  fi
  is_prefix80 "$pod_prefix" || die "Pod prefix '${pod_prefix}' is not a global-unicast /80"
}

# sync_listed ARRAY: one architecture-filtered sync of exactly the files ARRAY's
# '<name>|<object key>|<digest>[|<size>]' rows name, over the dual-stack S3 endpoint.
sync_listed() {
  local -n rows=$1
  local row path filters=()
  for row in "${rows[@]}"; do
    IFS='|' read -r _ path _ <<<"$row"
    filters+=(--include "${path#dependencies/}")
  done
  mkdir -p "$downloads"
  aws s3 sync "s3://${bucket}/dependencies/" "${downloads}/" --exclude '*' "${filters[@]}" \
    --region "$region" --endpoint-url "$s3_endpoint" \
    --only-show-errors --no-progress
}

# verify_listed ARRAY: checks every file's digest (the prefix names the algorithm: sha256 or
# sha512) and, where the row has one, its size; a mismatching file is removed so the next sync
# fetches it again.
verify_listed() {
  local -n rows=$1
  local row path digest size file algorithm actual failed=0
  for row in "${rows[@]}"; do
    IFS='|' read -r _ path digest size <<<"$row"
    file="${downloads}/${path#dependencies/}"
    algorithm="${digest%%:*}"
    if [[ ! -f $file ]]; then
      log "missing ${path}"
      failed=1
      continue
    fi
    if [[ -n $size && $(stat -c %s "$file") != "$size" ]]; then
      log "size mismatch for ${path} (expected ${size} bytes); removing it"
      rm -f "$file"
      failed=1
      continue
    fi
    actual="$("${algorithm}sum" "$file" | cut -d ' ' -f 1)"
    if [[ "${algorithm}:${actual}" != "$digest" ]]; then
      log "digest mismatch for ${path}; removing it"
      rm -f "$file"
      failed=1
    fi
  done
  return "$failed"
}

sync_dependencies() {
  sync_listed dependencies
}

verify_dependencies() {
  verify_listed dependencies
}

fetch_and_verify() {
  sync_dependencies && verify_dependencies
}

# Moves verified downloads to their canonical names under /opt/podmin/dependencies.
install_canonical() {
  local row name path
  mkdir -p "$canonical"
  for row in "${dependencies[@]}"; do
    IFS='|' read -r name path _ <<<"$row"
    install -m 0644 "${downloads}/${path#dependencies/}" "${canonical}/${name}"
  done
}

# Without setup --otel-logs nothing below installs or runs Fluent Bit.
otel_logs_enabled() {
  [[ -n $otel_logs_endpoint ]]
}

# libpq5 and Fluent Bit from the bucket, verified against the manifest's digest and size.
fetch_and_verify_otel_logs() {
  sync_listed otel_logs_packages && verify_listed otel_logs_packages
}

# Installs the verified packages with dpkg in otel_logs_packages order (libpq5, then Fluent Bit,
# which depends on it); a failed install stops bootstrap naming the package.
install_otel_logs_packages() {
  local row name path
  for row in "${otel_logs_packages[@]}"; do
    IFS='|' read -r name path _ <<<"$row"
    log "installing ${name} ($(basename "$path")) with dpkg"
    dpkg -i "${downloads}/${path#dependencies/}" ||
      die "dpkg could not install ${name} ($(basename "$path")); log export needs libpq5, then Fluent Bit"
  done
}

install_runtime() {
  local bin="${root}/usr/local/bin" temp
  mkdir -p "$bin" "${root}/opt/cni/bin" "${root}/opt/podmin/node"
  # containerd without runc: its runc shim is left out and no runc binary is installed.
  tar -xzf "${canonical}/containerd.tar.gz" -C "${root}/usr/local" --no-same-owner \
    --exclude 'bin/containerd-shim-runc-v2'
  # The complete gVisor payload: runsc, containerd-shim-runsc-v1 and its sidecar files.
  tar -xjf "${canonical}/gvisor.tar.bz2" -C "$bin" --no-same-owner
  tar -xzf "${canonical}/cni-plugins.tgz" -C "${root}/opt/cni/bin" --no-same-owner
  install -m 0755 "${canonical}/kubelet" "${bin}/kubelet"
  tar -xzf "${canonical}/crictl.tar.gz" -C "$bin" --no-same-owner crictl
  temp="$(mktemp -d)"
  tar -xzf "${canonical}/coredns.tgz" -C "$temp" --no-same-owner
  install -m 0755 "${temp}/coredns" "${bin}/coredns"
  rm -rf "$temp"
  tar -xJf "${canonical}/nodejs.tar.xz" -C "${root}/opt/podmin/node" --no-same-owner --strip-components 1
  install_agent
}

# The agent artifact (podmin-agent.cjs, every service program, proto/, koffi/, bpf/) becomes
# /opt/podmin/agent/ in one step: each install extracts into a fresh directory, then renames a
# symlink over /opt/podmin/agent, so a restarting agent sees the old set or the new one, never
# a mix. Directories of earlier installs are removed afterwards.
install_agent() {
  local base="${root}/opt/podmin" fresh link old
  mkdir -p "$base"
  fresh="$(mktemp -d "${base}/agent-XXXXXXXX")"
  chmod 0755 "$fresh"
  tar -xzf "${canonical}/podmin-agent.tar.gz" -C "$fresh" --no-same-owner
  if [[ ! -f ${fresh}/podmin-agent.cjs ]]; then
    rm -rf "$fresh"
    die 'the podmin-agent artifact holds no podmin-agent.cjs'
  fi
  link="$(mktemp -u "${base}/agent-link-XXXXXXXX")"
  ln -s "$(basename "$fresh")" "$link"
  # An earlier bootstrap's real directory cannot be replaced by rename(2): move it aside first.
  if [[ -d ${base}/agent && ! -L ${base}/agent ]]; then
    mv "${base}/agent" "$(mktemp -u "${base}/agent-old-XXXXXXXX")"
  fi
  mv -T "$link" "${base}/agent"
  for old in "${base}"/agent-*; do
    [[ $old == "$fresh" ]] || rm -rf "$old"
  done
  log "installed the podmin-agent artifact in /opt/podmin/agent ($(basename "$fresh"))"
}

create_users_and_directories() {
  if [[ -z $root ]] && ! id coredns >/dev/null 2>&1; then
    useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin coredns
  fi
  local dir
  for dir in /etc/podmin /etc/podmin/manifests /etc/podmin/kubelet /etc/coredns /etc/cni/net.d \
    /etc/containerd/certs.d/registry.podmin.internal /var/lib/kubelet /var/lib/podmin /run/podmin; do
    mkdir -p "${root}${dir}"
    chmod 0755 "${root}${dir}"
  done
}

# The resolver Debian was given by the provider (systemd-resolved's upstream list when present).
provider_resolv_conf() {
  if [[ -f ${root}/run/systemd/resolve/resolv.conf ]]; then
    printf '/run/systemd/resolve/resolv.conf\n'
  else
    printf '/etc/resolv.conf\n'
  fi
}

# @podmin:node-config-begin
# GENERATED by userdata/embed.mjs from @podmin/cli-util-node-config (the aws profile). Do not
# edit; change the renderer and run `nx run userdata:generate`.
kubelet_args='--config=/etc/podmin/kubelet/config.yaml --root-dir=/var/lib/kubelet'

# Writes containerd's, CNI's, kubelet's, crictl's and CoreDNS's configuration from
# node_address, pod_prefix, pause_image, resolv_conf, system_reserved_cpu, system_reserved_memory.
write_node_config() {
  write_file /etc/containerd/config.toml 0644 <<EOF
version = 3
root = '/var/lib/containerd'
state = '/run/containerd'

[grpc]
  address = '/run/containerd/containerd.sock'

[plugins.'io.containerd.cri.v1.images'.pinned_images]
  sandbox = '${pause_image}'

[plugins.'io.containerd.cri.v1.images'.registry]
  config_path = '/etc/containerd/certs.d'

[plugins.'io.containerd.cri.v1.runtime'.containerd]
  default_runtime_name = 'runsc'

[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runsc]
  runtime_type = 'io.containerd.runsc.v1'

[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runsc.options]
  TypeUrl = 'io.containerd.runsc.v1.options'
  ConfigPath = '/etc/containerd/runsc.toml'

[plugins.'io.containerd.cri.v1.runtime'.cni]
  bin_dirs = ['/opt/cni/bin']
  conf_dir = '/etc/cni/net.d'
EOF
  write_file /etc/containerd/runsc.toml 0644 <<EOF
[runsc_config]
  platform = 'systrap'
EOF
  write_file /etc/containerd/certs.d/registry.podmin.internal/hosts.toml 0644 <<EOF
server = 'http://127.0.0.1:5000'

[host.'http://127.0.0.1:5000']
  capabilities = ['pull', 'resolve']
EOF
  write_file /etc/cni/net.d/10-podmin.conflist 0644 <<EOF
{
  "cniVersion": "1.0.0",
  "name": "podmin",
  "plugins": [
    {
      "type": "ptp",
      "ipMasq": false,
      "ipam": {
        "type": "host-local",
        "ranges": [
          [
            {
              "subnet": "${pod_prefix}"
            }
          ]
        ],
        "routes": [
          {
            "dst": "::/0"
          }
        ],
        "dataDir": "/var/lib/cni/networks"
      }
    }
  ]
}
EOF
  write_file /etc/podmin/kubelet/config.yaml 0644 <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
staticPodPath: "/etc/podmin/manifests"
containerRuntimeEndpoint: "unix:///run/containerd/containerd.sock"
cgroupDriver: systemd
address: "::1"
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: false
authorization:
  mode: AlwaysAllow
clusterDomain: cluster.local
clusterDNS:
  - "${node_address}"
resolvConf: ""
featureGates:
  PodsAPI: true
kubeReserved:
  cpu: "100m"
  memory: "128Mi"
systemReserved:
  cpu: "${system_reserved_cpu}"
  memory: "${system_reserved_memory}"
enforceNodeAllocatable:
  - pods
EOF
  write_file /etc/crictl.yaml 0644 <<EOF
runtime-endpoint: "unix:///run/containerd/containerd.sock"
image-endpoint: "unix:///run/containerd/containerd.sock"
timeout: 10
EOF
  write_file /etc/coredns/Corefile 0644 <<EOF
svc.cluster.local:53 {
    bind ${node_address}
    forward . 127.0.0.1:1053
    errors
}
.:53 {
    bind ${node_address}
    forward . ${resolv_conf}
    cache 30
    errors
}
EOF
}
# @podmin:node-config-end

write_configuration() {
  local primary_if=$1 pod_if=$2 gateway=$3 publish_env='' resolv_conf
  # setup --workload-ca-publish: podmin-agent reads its destination from the environment.
  if [[ -n $workload_ca_publish ]]; then
    publish_env="PODMIN_WORKLOAD_CA_PUBLISH=${workload_ca_publish}"
  fi

  # setup --otel-logs: the agent keeps Fluent Bit's client leaf (mtls=true) and the exporter's
  # CA bundle (ca=) under /run/podmin/telemetry.
  local otel_env=()
  if otel_logs_enabled; then
    otel_env=("PODMIN_OTEL_LOGS_MTLS=${otel_logs_mtls}")
    [[ -z $otel_logs_ca ]] || otel_env+=("PODMIN_OTEL_LOGS_CA=${otel_logs_ca}")
  fi

  {
    cat <<EOF
NODE_ADDRESS=${node_address}
POD_PREFIX=${pod_prefix}
POD_INTERFACE=${pod_if}
POD_INTERFACE_ADDRESS=${secondary_address}
GATEWAY=${gateway}
${publish_env}
EOF
    ((${#otel_env[@]} == 0)) || printf '%s\n' "${otel_env[@]}"
  } | write_file /etc/podmin/node.env 0644

  write_file /etc/sysctl.d/90-podmin.conf 0644 <<EOF
net.ipv6.conf.all.forwarding = 1
net.ipv6.conf.default.forwarding = 1
net.ipv6.conf.all.accept_ra = 2
net.ipv6.conf.default.accept_ra = 2
net.ipv6.conf.${primary_if}.accept_ra = 2
net.ipv6.conf.${pod_if}.accept_ra = 2
net.ipv6.conf.${pod_if}.accept_ra_defrtr = 0
net.ipv4.ip_local_reserved_ports = 30000-32767
EOF

  # The generated block above writes containerd, the registry hosts file, the ptp/host-local
  # CNI network, kubelet, crictl and the Corefile (CoreDNS forwards other names to the
  # provider's resolvers).
  resolv_conf="$(provider_resolv_conf)"
  write_node_config

  write_units
}

write_units() {
  write_file /etc/systemd/system/run-podmin.mount 0644 <<'EOF'
[Unit]
Description=Podmin runtime tmpfs (workload identities, secrets, telemetry)
DefaultDependencies=no
Conflicts=umount.target
Before=local-fs.target umount.target

[Mount]
What=tmpfs
Where=/run/podmin
Type=tmpfs
Options=mode=0755,nosuid,nodev,noexec,size=256m

[Install]
WantedBy=local-fs.target
EOF

  write_file /etc/systemd/system/containerd.service 0644 <<'EOF'
[Unit]
Description=containerd (gVisor runtime by default)
After=network.target local-fs.target

[Service]
ExecStartPre=-/sbin/modprobe overlay
ExecStart=/usr/local/bin/containerd --config /etc/containerd/config.toml
Type=notify
Delegate=yes
KillMode=process
Restart=always
RestartSec=5
LimitNOFILE=infinity
TasksMax=infinity
OOMScoreAdjust=-999

[Install]
WantedBy=multi-user.target
EOF

  write_file /etc/systemd/system/podmin-pod-network.service 0644 <<EOF
[Unit]
Description=Podmin Pod network: delegated-prefix sources leave through the Pod interface
Wants=network-online.target
After=network-online.target

[Service]
Type=oneshot
RemainAfterExit=yes
EnvironmentFile=/etc/podmin/node.env
ExecStartPre=-/usr/sbin/ip -6 rule del priority 1000
ExecStartPre=-/usr/sbin/ip -6 rule del priority 1001
ExecStart=/usr/sbin/ip link set dev \${POD_INTERFACE} up
ExecStart=/usr/sbin/ip -6 addr replace \${POD_INTERFACE_ADDRESS}/128 dev \${POD_INTERFACE} noprefixroute
ExecStart=/usr/sbin/ip -6 route replace default via \${GATEWAY} dev \${POD_INTERFACE} table ${pod_route_table}
ExecStart=/usr/sbin/ip -6 rule add priority 1000 from \${POD_PREFIX} lookup main suppress_prefixlength 0
ExecStart=/usr/sbin/ip -6 rule add priority 1001 from \${POD_PREFIX} lookup ${pod_route_table}
ExecStop=-/usr/sbin/ip -6 rule del priority 1001
ExecStop=-/usr/sbin/ip -6 rule del priority 1000

[Install]
WantedBy=multi-user.target
EOF

  # KillMode=mixed: systemctl stop sends SIGTERM to the supervisor alone, which stops the
  # service processes in the spec's order (reconciliation, drain, DNS TTL margin, dataplane
  # last); SIGKILL goes to every process of the unit only after TimeoutStopSec. (The default,
  # control-group, would SIGTERM all seven at once; the services ignore a signal while their
  # supervisor lives, so the order would hold even then.) TimeoutStopSec covers the whole order
  # (stopBoundMs in libs/agent/feature-supervisor): six services at most 10 s each to exit (the
  # drain's 3 s bound is inside the coordinator's), plus the 5 s DNS TTL margin = 65 s, plus
  # 10 s for the supervisor itself.
  # The spec's startup order: the runtime tmpfs, kubelet, then podmin-agent and CoreDNS (the
  # agent then restores Service DNS, finds the leader and reconciles). kubelet restarts the
  # static Pods of the last boot at once; their identity and secret hostPaths (type Directory,
  # on the tmpfs) are empty after a reboot, so kubelet holds those Pods until the agent's first
  # pass has rewritten them, and the agent's Pods API watch finds kubelet already serving.
  write_file /etc/systemd/system/podmin-agent.service 0644 <<EOF
[Unit]
Description=podmin-agent (static Pods, registry, identities, Service DNS and dataplane)
Requires=run-podmin.mount
Wants=network-online.target kubelet.service
After=network-online.target run-podmin.mount podmin-pod-network.service kubelet.service

[Service]
EnvironmentFile=/etc/podmin/node.env
ExecStart=/opt/podmin/node/bin/node /opt/podmin/agent/podmin-agent.cjs --provider aws --bucket ${bucket} --region ${region} --cluster ${cluster} --nodegroup ${nodegroup} --ipv6-prefix \${POD_PREFIX}
Restart=always
RestartSec=2
KillMode=mixed
TimeoutStopSec=75

[Install]
WantedBy=multi-user.target
EOF

  write_file /etc/systemd/system/coredns.service 0644 <<'EOF'
[Unit]
Description=CoreDNS on the node IPv6 address for Pods
Wants=network-online.target
After=network-online.target podmin-pod-network.service kubelet.service

[Service]
User=coredns
AmbientCapabilities=CAP_NET_BIND_SERVICE
CapabilityBoundingSet=CAP_NET_BIND_SERVICE
NoNewPrivileges=yes
ExecStart=/usr/local/bin/coredns -conf /etc/coredns/Corefile
Restart=always
RestartSec=2

[Install]
WantedBy=multi-user.target
EOF

  write_file /etc/systemd/system/kubelet.service 0644 <<EOF
[Unit]
Description=kubelet (standalone, static Pods only, Pods API enabled)
Requires=run-podmin.mount containerd.service podmin-pod-network.service
Wants=podmin-agent.service coredns.service
After=run-podmin.mount containerd.service podmin-pod-network.service

[Service]
ExecStart=/usr/local/bin/kubelet ${kubelet_args}
Restart=always
RestartSec=5

[Install]
WantedBy=multi-user.target
EOF

  if otel_logs_enabled; then
    write_otel_logs_unit
  fi
}

# Fluent Bit as our own fluent-bit.service in /etc/systemd/system, which replaces the unit the
# package ships under /lib (the name podmin-agent restarts it by when the leaf is renewed).
# Nothing requires or waits for it: kubelet, the agent and workloads start and run whether it
# runs or not. It starts after the agent (which issues the leaf and installs the CA bundle); its
# ExecStartPre writes the configuration (0600, atomically, on the unit's private runtime
# directory) with the exporter headers fetched at that moment, and it restarts on any exit,
# every 10 s for ever. systemd reads % as a specifier, so the endpoint's are doubled.
write_otel_logs_unit() {
  local flags
  flags="--provider aws --region ${region} --cluster ${cluster} --nodegroup ${nodegroup}"
  flags+=" --endpoint ${otel_logs_endpoint//%/%%} --protocol ${otel_logs_protocol} --mtls ${otel_logs_mtls}"
  [[ -z $otel_logs_ca ]] || flags+=" --ca-file /run/podmin/telemetry/otel-logs-ca.pem"
  [[ -z $otel_logs_headers_provider ]] || flags+=" --headers-provider ${otel_logs_headers_provider}"
  flags+=" --out /run/fluent-bit/podmin.yaml"
  write_file /etc/systemd/system/fluent-bit.service 0644 <<EOF
[Unit]
Description=Fluent Bit: container logs over OTLP (setup --otel-logs)
Wants=network-online.target
After=network-online.target podmin-agent.service
StartLimitIntervalSec=0

[Service]
Environment=AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE=IPv6
RuntimeDirectory=fluent-bit
RuntimeDirectoryMode=0700
ExecStartPre=/opt/podmin/node/bin/node /opt/podmin/agent/podmin-agent.cjs otel-logs-config ${flags}
ExecStart=/opt/fluent-bit/bin/fluent-bit --config /run/fluent-bit/podmin.yaml
Restart=always
RestartSec=10
TimeoutStartSec=90
OOMScoreAdjust=500

[Install]
WantedBy=multi-user.target
EOF
}

# AWS SSM Agent from the regional package bucket, using dual-stack service endpoints.
install_ssm_agent() {
  local deb="${downloads}/amazon-ssm-agent.deb"
  local url="https://s3.dualstack.${region}.amazonaws.com/amazon-ssm-${region}/latest/debian_${arch}/amazon-ssm-agent.deb"
  retry 5 curl -fsS -o "$deb" "$url"
  dpkg -i "$deb"
  write_file /etc/amazon/ssm/amazon-ssm-agent.json 0644 <<'EOF'
{
  "Agent": {
    "UseDualStackEndpoint": true
  }
}
EOF
  write_file /etc/systemd/system/amazon-ssm-agent.service.d/10-podmin-dualstack.conf 0644 <<'EOF'
[Service]
Environment=AWS_USE_DUALSTACK_ENDPOINT=true
EOF
  systemctl daemon-reload
  systemctl enable amazon-ssm-agent.service
  systemctl restart amazon-ssm-agent.service
}

main() {
  log "bootstrapping ${cluster}/${nodegroup} (${arch})"
  discover_network
  install_ssm_agent
  create_users_and_directories
  retry 5 fetch_and_verify
  if otel_logs_enabled; then
    retry 5 fetch_and_verify_otel_logs
  fi
  install_canonical
  install_runtime
  ensure_secondary_address
  ensure_pod_prefix
  local primary_if pod_if gateway
  primary_if="$(interface_for_mac "$primary_mac")"
  pod_if="$(interface_for_mac "$secondary_mac")"
  gateway="$(ip -6 route show default dev "$primary_if" | awk '/ via / { for (i = 1; i < NF; i++) if ($i == "via") { print $(i + 1); exit } }')"
  [[ -n $gateway ]] || die "no IPv6 default gateway on ${primary_if}"
  write_configuration "$primary_if" "$pod_if" "$gateway"
  sysctl --system >/dev/null
  systemctl daemon-reload
  # After its unit is written, so a start by the package's scripts would run ours.
  if otel_logs_enabled; then
    install_otel_logs_packages
    systemctl daemon-reload
  fi
  systemctl enable --now run-podmin.mount containerd.service podmin-pod-network.service
  systemctl enable --now kubelet.service
  systemctl enable --now podmin-agent.service coredns.service
  # Queued, never waited for: its first start waits for the agent's leaf and CA bundle.
  if otel_logs_enabled; then
    systemctl enable fluent-bit.service
    systemctl start --no-block fluent-bit.service
  fi
  log 'bootstrap complete'
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  main "$@"
fi
