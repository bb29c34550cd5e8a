#!/usr/bin/env bats
# Exercises the functions of userdata/aws.sh with stand-ins for IMDS (curl), aws and ip on PATH.

setup() {
  TEST_TMP="$(mktemp -d)"
  export STUB_LOG="$TEST_TMP/calls.log" IMDS_DIR="$TEST_TMP/imds" AWS_STATE="$TEST_TMP/aws"
  export AWS_BUCKET="$TEST_TMP/bucket" IP_LINKS="$TEST_TMP/links"
  export PODMIN_TEST_ROOT="$TEST_TMP/root" PODMIN_TEST_IMDS='http://imds.test' PODMIN_TEST_RETRY_DELAY=0
  mkdir -p "$AWS_STATE" "$AWS_BUCKET" "$PODMIN_TEST_ROOT"
  : >"$STUB_LOG"
  PATH="$BATS_TEST_DIRNAME/stubs:$PATH"

  local macs="$IMDS_DIR/network/interfaces/macs"
  mkdir -p "$macs/0e:00:00:00:00:01" "$macs/0e:00:00:00:00:02"
  # As IMDS answers: no newline after the last entry.
  printf '0e:00:00:00:00:02/\n0e:00:00:00:00:01/' >"$macs/_list"
  echo 0 >"$macs/0e:00:00:00:00:01/device-number"
  echo 1 >"$macs/0e:00:00:00:00:02/device-number"
  printf '2600:1f14:aaaa:bb01::10\n' >"$macs/0e:00:00:00:00:01/ipv6s"
  echo eni-0123456789abcdef0 >"$macs/0e:00:00:00:00:02/interface-id"
  cat >"$IP_LINKS" <<'LINKS'
1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN mode DEFAULT group default qlen 1000\    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00
2: ens5: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 9001 qdisc mq state UP mode DEFAULT group default qlen 1000\    link/ether 0e:00:00:00:00:01 brd ff:ff:ff:ff:ff:ff
3: ens6: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 9001 qdisc mq state UP mode DEFAULT group default qlen 1000\    link/ether 0e:00:00:00:00:02 brd ff:ff:ff:ff:ff:ff
LINKS

  # shellcheck source=../aws.sh
  source "$BATS_TEST_DIRNAME/../aws.sh"
}

teardown() {
  rm -rf "$TEST_TMP"
}

# refute COMMAND...: fails when COMMAND succeeds. (Bash's errexit ignores a command negated
# with !, so `! grep …` would not fail a test unless it is the test's last line.)
refute() {
  if "$@"; then
    echo "unexpectedly succeeded: $*" >&2
    return 1
  fi
}

# put_dependency NAME CANONICAL-NAME CONTENT: stores a file in the fake bucket, adds its row.
put_dependency() {
  local name=$1 local_name=$2 content=$3
  local path="dependencies/${name}/${name}-v1.0.0-linux-amd64"
  mkdir -p "$AWS_BUCKET/$name"
  printf '%s' "$content" >"$AWS_BUCKET/${path#dependencies/}"
  dependencies+=("${local_name}|${path}|sha512:$(printf '%s' "$content" | sha512sum | cut -d ' ' -f 1)")
}

@test 'discover_network takes the node address from the primary ENI through an IMDSv2 token' {
  discover_network
  [ "$node_address" = '2600:1f14:aaaa:bb01::10' ]
  [ "$primary_mac" = '0e:00:00:00:00:01' ]
  [ "$secondary_eni" = 'eni-0123456789abcdef0' ]
  grep -q '^curl PUT http://imds.test/latest/api/token$' "$STUB_LOG"
  [ "$(grep -c 'api/token' "$STUB_LOG")" -eq 1 ]
}

@test 'interface_for_mac maps ENIs to Linux interfaces' {
  [ "$(interface_for_mac 0e:00:00:00:00:02)" = 'ens6' ]
  run interface_for_mac 0e:ff:ff:ff:ff:ff
  [ "$status" -ne 0 ]
}

@test 'ensure_pod_prefix reuses an existing delegated prefix without assigning' {
  discover_network
  printf '2600:1f14:aaaa:bb01:77::/80\n' >"$AWS_STATE/prefixes"
  ensure_pod_prefix
  [ "$pod_prefix" = '2600:1f14:aaaa:bb01:77::/80' ]
  refute grep -q 'assign-ipv6-addresses' "$STUB_LOG"
  grep -q -- '--endpoint-url https://ec2.us-east-1.api.aws' "$STUB_LOG"
}

@test 'ensure_pod_prefix assigns exactly one prefix when none exists, and is idempotent after' {
  discover_network
  ensure_pod_prefix
  [ "$pod_prefix" = '2600:1f14:aaaa:bb01:1234::/80' ]
  [ "$(grep -c -- 'assign-ipv6-addresses .*--ipv6-prefix-count 1' "$STUB_LOG")" -eq 1 ]
  pod_prefix=''
  ensure_pod_prefix
  [ "$pod_prefix" = '2600:1f14:aaaa:bb01:1234::/80' ]
  [ "$(grep -c -- 'assign-ipv6-addresses' "$STUB_LOG")" -eq 1 ]
}

@test 'the secondary address is ensured before the prefix (address-before-prefix)' {
  discover_network
  ensure_secondary_address
  ensure_pod_prefix
  [ "$secondary_address" = '2600:1f14:aaaa:bb01::99' ]
  local address_line prefix_line
  address_line="$(grep -n -- '--ipv6-address-count 1' "$STUB_LOG" | cut -d: -f1)"
  prefix_line="$(grep -n -- '--ipv6-prefix-count 1' "$STUB_LOG" | cut -d: -f1)"
  [ "$address_line" -lt "$prefix_line" ]
}

@test 'a failed prefix lookup stops bootstrap instead of assigning another prefix' {
  discover_network
  touch "$AWS_STATE/describe-fails"
  run ensure_pod_prefix
  [ "$status" -ne 0 ]
  refute grep -q 'assign-ipv6-addresses' "$STUB_LOG"
}

@test 'a prefix that is not a global /80 is rejected' {
  discover_network
  export AWS_ASSIGNED_PREFIX='fd00::/64'
  run ensure_pod_prefix
  [ "$status" -ne 0 ]
  [[ "$output" == *'is not a global-unicast /80'* ]]
}

@test 'sync_dependencies runs one architecture-filtered sync over the dual-stack S3 endpoint' {
  dependencies=()
  put_dependency kubelet kubelet 'kubelet bytes'
  put_dependency crictl crictl.tar.gz 'crictl bytes'
  sync_dependencies
  [ "$(grep -c '^aws s3 sync' "$STUB_LOG")" -eq 1 ]
  grep -q -- "s3 sync s3://podmin-example/dependencies/ $PODMIN_TEST_ROOT/opt/podmin/downloads/ --exclude \\* --include kubelet/kubelet-v1.0.0-linux-amd64 --include crictl/crictl-v1.0.0-linux-amd64" "$STUB_LOG"
  grep -q -- '--endpoint-url https://s3.dualstack.us-east-1.amazonaws.com' "$STUB_LOG"
}

@test 'a failed download is retried and then verified' {
  dependencies=()
  put_dependency kubelet kubelet 'kubelet bytes'
  export AWS_SYNC_FAILURES=1
  retry 3 fetch_and_verify
  [ "$(cat "$AWS_STATE/syncs")" -eq 2 ]
  verify_dependencies
}

@test 'a corrupt download is removed, fetched again and verified' {
  dependencies=()
  put_dependency kubelet kubelet 'kubelet bytes'
  export AWS_SYNC_CORRUPT=1
  retry 3 fetch_and_verify
  [ "$(cat "$AWS_STATE/syncs")" -eq 2 ]
  [ "$(cat "$PODMIN_TEST_ROOT/opt/podmin/downloads/kubelet/kubelet-v1.0.0-linux-amd64")" = 'kubelet bytes' ]
}

@test 'verification failing on every attempt fails bootstrap' {
  dependencies=()
  put_dependency kubelet kubelet 'kubelet bytes'
  export AWS_SYNC_CORRUPT=9
  run retry 3 fetch_and_verify
  [ "$status" -ne 0 ]
  [[ "$output" == *'giving up after 3 attempts'* ]]
}

@test 'install_canonical moves verified files to their canonical names' {
  dependencies=()
  put_dependency kubelet kubelet 'kubelet bytes'
  put_dependency containerd containerd.tar.gz 'containerd bytes'
  fetch_and_verify
  install_canonical
  [ "$(cat "$PODMIN_TEST_ROOT/opt/podmin/dependencies/kubelet")" = 'kubelet bytes' ]
  [ -f "$PODMIN_TEST_ROOT/opt/podmin/dependencies/containerd.tar.gz" ]
}

@test 'write_configuration renders the runtime, kubelet, DNS, network and unit files' {
  discover_network
  secondary_address='2600:1f14:aaaa:bb01::99'
  pod_prefix='2600:1f14:aaaa:bb01:1234::/80'
  write_configuration ens5 ens6 fe80::1
  local etc="$PODMIN_TEST_ROOT/etc"
  grep -q "default_runtime_name = 'runsc'" "$etc/containerd/config.toml"
  grep -qx 'staticPodPath: "/etc/podmin/manifests"' "$etc/podmin/kubelet/config.yaml"
  grep -qx '  - "2600:1f14:aaaa:bb01::10"' "$etc/podmin/kubelet/config.yaml"
  grep -qx "  sandbox = '${pause_image}'" "$etc/containerd/config.toml"
  grep -qx 'runtime-endpoint: "unix:///run/containerd/containerd.sock"' "$etc/crictl.yaml"
  grep -q 'bind 2600:1f14:aaaa:bb01::10' "$etc/coredns/Corefile"
  grep -q 'forward . 127.0.0.1:1053' "$etc/coredns/Corefile"
  grep -qx '    forward . /etc/resolv.conf' "$etc/coredns/Corefile"
  grep -q '"subnet": "2600:1f14:aaaa:bb01:1234::/80"' "$etc/cni/net.d/10-podmin.conflist"
  grep -q 'POD_PREFIX=2600:1f14:aaaa:bb01:1234::/80' "$etc/podmin/node.env"
  grep -q 'net.ipv6.conf.all.forwarding = 1' "$etc/sysctl.d/90-podmin.conf"
  grep -q 'from ${POD_PREFIX} lookup 180' "$etc/systemd/system/podmin-pod-network.service"
  grep -q -- '--provider aws --bucket podmin-example --region us-east-1 --cluster example --nodegroup default --ipv6-prefix ${POD_PREFIX}$' "$etc/systemd/system/podmin-agent.service"
  grep -q '^ExecStart=/opt/podmin/node/bin/node /opt/podmin/agent/podmin-agent.cjs ' "$etc/systemd/system/podmin-agent.service"
  # The spec's startup order: tmpfs, kubelet, then podmin-agent and CoreDNS.
  grep -q '^After=run-podmin.mount containerd.service podmin-pod-network.service$' "$etc/systemd/system/kubelet.service"
  grep -q '^Requires=run-podmin.mount containerd.service podmin-pod-network.service$' "$etc/systemd/system/kubelet.service"
  grep -qx 'ExecStart=/usr/local/bin/kubelet --config=/etc/podmin/kubelet/config.yaml --root-dir=/var/lib/kubelet' "$etc/systemd/system/kubelet.service"
  grep -q '^After=network-online.target run-podmin.mount podmin-pod-network.service kubelet.service$' "$etc/systemd/system/podmin-agent.service"
  grep -q '^After=network-online.target podmin-pod-network.service kubelet.service$' "$etc/systemd/system/coredns.service"
  grep -qx 'KillMode=mixed' "$etc/systemd/system/podmin-agent.service"
  grep -q '^Where=/run/podmin$' "$etc/systemd/system/run-podmin.mount"
  # No --workload-ca-publish: the agent's environment names no destination.
  refute grep -q 'PODMIN_WORKLOAD_CA_PUBLISH' "$etc/podmin/node.env"
  grep -q '^EnvironmentFile=/etc/podmin/node.env$' "$etc/systemd/system/podmin-agent.service"
}

@test 'write_configuration hands --workload-ca-publish to podmin-agent through node.env' {
  discover_network
  secondary_address='2600:1f14:aaaa:bb01::99'
  pod_prefix='2600:1f14:aaaa:bb01:1234::/80'
  workload_ca_publish='s3://example-trust/podmin/(demo)_ca-1.pem'
  write_configuration ens5 ens6 fe80::1
  grep -qx 'PODMIN_WORKLOAD_CA_PUBLISH=s3://example-trust/podmin/(demo)_ca-1.pem' "$PODMIN_TEST_ROOT/etc/podmin/node.env"
  grep -qx 'POD_PREFIX=2600:1f14:aaaa:bb01:1234::/80' "$PODMIN_TEST_ROOT/etc/podmin/node.env"
}

@test 'the S3 and EC2 endpoints can be pointed at emulators (test seams)' {
  PODMIN_TEST_S3_ENDPOINT='http://127.0.0.1:9' PODMIN_TEST_EC2_ENDPOINT='http://127.0.0.1:8' source "$BATS_TEST_DIRNAME/../aws.sh"
  dependencies=()
  put_dependency kubelet kubelet 'kubelet bytes'
  sync_dependencies
  grep -q -- '--endpoint-url http://127.0.0.1:9 ' "$STUB_LOG"
  discover_network
  ensure_pod_prefix
  grep -q -- '--endpoint-url http://127.0.0.1:8 ' "$STUB_LOG"
  refute grep -q 'amazonaws.com\|api.aws' "$STUB_LOG"
}

# agent_archive DIR LABEL: packs an agent artifact the way `bundle.mjs artifact` lays it out
# (flat: podmin-agent.cjs, service programs, proto/) into the canonical podmin-agent.tar.gz.
agent_archive() {
  local pack="$TEST_TMP/pack-$2"
  mkdir -p "$pack/proto/health/v1" "$PODMIN_TEST_ROOT/opt/podmin/dependencies"
  printf 'supervisor %s\n' "$2" >"$pack/podmin-agent.cjs"
  printf 'staticpod %s\n' "$2" >"$pack/agent-staticpod.cjs"
  printf 'syntax = "proto3";\n' >"$pack/proto/health/v1/health.proto"
  [[ ${1:-} == without-supervisor ]] && rm "$pack/podmin-agent.cjs"
  tar -czf "$PODMIN_TEST_ROOT/opt/podmin/dependencies/podmin-agent.tar.gz" -C "$pack" .
}

@test 'install_agent extracts the artifact as /opt/podmin/agent and replaces an earlier one whole' {
  local opt="$PODMIN_TEST_ROOT/opt/podmin"
  agent_archive complete v1
  install_agent
  [ "$(cat "$opt/agent/podmin-agent.cjs")" = 'supervisor v1' ]
  [ "$(cat "$opt/agent/agent-staticpod.cjs")" = 'staticpod v1' ]
  [ -f "$opt/agent/proto/health/v1/health.proto" ]
  [ -L "$opt/agent" ]
  local first
  first="$(readlink "$opt/agent")"
  agent_archive complete v2
  install_agent
  [ "$(cat "$opt/agent/podmin-agent.cjs")" = 'supervisor v2' ]
  [ "$(readlink "$opt/agent")" != "$first" ]
  # Only the live directory and its link remain: nothing of v1, no temporary link.
  [ "$(find "$opt" -maxdepth 1 -name 'agent*' | wc -l)" -eq 2 ]
  [ ! -e "$opt/$first" ]
}

@test 'install_agent replaces a plain directory an earlier bootstrap left' {
  local opt="$PODMIN_TEST_ROOT/opt/podmin"
  mkdir -p "$opt/agent"
  echo stale >"$opt/agent/podmin-agent.cjs"
  agent_archive complete v3
  install_agent
  [ -L "$opt/agent" ]
  [ "$(cat "$opt/agent/podmin-agent.cjs")" = 'supervisor v3' ]
  [ "$(find "$opt" -maxdepth 1 -name 'agent*' | wc -l)" -eq 2 ]
}

@test 'an artifact without podmin-agent.cjs fails bootstrap and leaves the installed agent' {
  local opt="$PODMIN_TEST_ROOT/opt/podmin"
  agent_archive complete v1
  install_agent
  agent_archive without-supervisor v2
  run install_agent
  [ "$status" -ne 0 ]
  [[ "$output" == *'holds no podmin-agent.cjs'* ]]
  [ "$(cat "$opt/agent/podmin-agent.cjs")" = 'supervisor v1' ]
}

# verify_root: gives $PODMIN_TEST_ROOT what systemd-analyze verify needs to check the rendered
# units: systemd's own units (targets the rendered ones name) and an executable at every path an
# Exec line names, so verify checks them instead of failing on this machine's layout; a missing
# or misspelt command, unit or key still fails it. Skips the test without systemd-analyze.
verify_root() {
  command -v systemd-analyze >/dev/null || skip 'systemd-analyze is not installed'
  local systemd_units unit exe
  systemd_units="$(pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null || echo /usr/lib/systemd/system)"
  [ -f "$systemd_units/sysinit.target" ] || systemd_units=/lib/systemd/system
  mkdir -p "$PODMIN_TEST_ROOT/usr/lib/systemd"
  cp -a "$systemd_units" "$PODMIN_TEST_ROOT/usr/lib/systemd/system"
  for unit in "$PODMIN_TEST_ROOT"/etc/systemd/system/*; do
    while read -r exe; do
      mkdir -p "$PODMIN_TEST_ROOT$(dirname "$exe")"
      printf '#!/bin/sh\n' >"$PODMIN_TEST_ROOT$exe"
      chmod 0755 "$PODMIN_TEST_ROOT$exe"
    done < <(sed -n 's/^Exec[A-Za-z]*=[-@!+:]*\([^ ]*\).*/\1/p' "$unit" | sort -u)
  done
}

@test 'every rendered systemd unit passes systemd-analyze verify' {
  configure_node
  verify_root
  [ -x "$PODMIN_TEST_ROOT/opt/podmin/node/bin/node" ]
  [ -x "$PODMIN_TEST_ROOT/usr/local/bin/kubelet" ]
  run systemd-analyze verify --root="$PODMIN_TEST_ROOT" "$PODMIN_TEST_ROOT"/etc/systemd/system/*.service "$PODMIN_TEST_ROOT"/etc/systemd/system/*.mount
  [ "$output" = '' ]
  [ "$status" -eq 0 ]
  # Not vacuous: the same check rejects a unit naming a command the root lacks.
  rm "$PODMIN_TEST_ROOT/usr/local/bin/coredns"
  run systemd-analyze verify --root="$PODMIN_TEST_ROOT" "$PODMIN_TEST_ROOT"/etc/systemd/system/coredns.service
  [ "$status" -ne 0 ]
}

@test 'main starts the units in the spec order: tmpfs, kubelet, then podmin-agent and CoreDNS' {
  local body starts
  body="$(declare -f main)"
  starts="$(grep -o 'systemctl enable --now .*' <<<"$body")"
  [ "$(sed -n 1p <<<"$starts")" = 'systemctl enable --now run-podmin.mount containerd.service podmin-pod-network.service;' ]
  [ "$(sed -n 2p <<<"$starts")" = 'systemctl enable --now kubelet.service;' ]
  [ "$(sed -n 3p <<<"$starts")" = 'systemctl enable --now podmin-agent.service coredns.service;' ]
}

# put_package NAME ALGORITHM CONTENT: stores a package in the fake bucket and adds its
# otel_logs_packages row (digest by ALGORITHM, exact size), as the renderer writes it.
put_package() {
  local name=$1 algorithm=$2 content=$3
  local path="dependencies/${name}/${name}-v1.0-linux-amd64.deb"
  mkdir -p "$AWS_BUCKET/$name"
  printf '%s' "$content" >"$AWS_BUCKET/${path#dependencies/}"
  otel_logs_packages+=("${name}.deb|${path}|${algorithm}:$(printf '%s' "$content" | "${algorithm}sum" | cut -d ' ' -f 1)|${#content}")
}

# otel_logs_on [CA] [HEADERS PROVIDER]: the values the renderer writes for setup --otel-logs.
otel_logs_on() {
  otel_logs_endpoint='https://otlp.example.com:4318/v1/logs?tenant=a%20b&x=1'
  otel_logs_protocol='http'
  otel_logs_mtls='true'
  otel_logs_ca=${1:-}
  otel_logs_headers_provider=${2:-}
  otel_logs_packages=()
  put_package libpq5 sha256 'libpq5 package bytes'
  put_package fluent-bit sha512 'fluent-bit package bytes'
}

configure_node() {
  discover_network
  secondary_address='2600:1f14:aaaa:bb01::99'
  pod_prefix='2600:1f14:aaaa:bb01:1234::/80'
  write_configuration ens5 ens6 fe80::1
}

@test 'without --otel-logs nothing of log export is fetched, written or started' {
  [ -z "$otel_logs_endpoint" ]
  [ "${#otel_logs_packages[@]}" -eq 0 ]
  refute otel_logs_enabled
  configure_node
  [ ! -e "$PODMIN_TEST_ROOT/etc/systemd/system/fluent-bit.service" ]
  refute grep -q 'PODMIN_OTEL_LOGS' "$PODMIN_TEST_ROOT/etc/podmin/node.env"
  refute grep -rq 'fluent-bit' "$PODMIN_TEST_ROOT/etc"
  # main guards every log-export step with otel_logs_enabled.
  local body
  body="$(declare -f main)"
  [ "$(grep -c 'otel_logs_enabled' <<<"$body")" -eq 3 ]
}

@test 'the log-export packages are verified by their own algorithm (sha256, sha512) and size' {
  otel_logs_on
  fetch_and_verify_otel_logs
  grep -q -- '--include libpq5/libpq5-v1.0-linux-amd64.deb --include fluent-bit/fluent-bit-v1.0-linux-amd64.deb' "$STUB_LOG"
  [[ ${otel_logs_packages[0]} == *'|sha256:'* && ${otel_logs_packages[1]} == *'|sha512:'* ]]
  # A size the manifest does not name fails even if the digest field were ignored.
  local downloaded="$PODMIN_TEST_ROOT/opt/podmin/downloads/fluent-bit/fluent-bit-v1.0-linux-amd64.deb"
  otel_logs_packages[1]="${otel_logs_packages[1]%|*}|9999"
  run verify_listed otel_logs_packages
  [ "$status" -ne 0 ]
  [[ "$output" == *'size mismatch for dependencies/fluent-bit/fluent-bit-v1.0-linux-amd64.deb (expected 9999 bytes)'* ]]
  [ ! -e "$downloaded" ]
}

@test 'a digest mismatch of a log-export package fails bootstrap before dpkg runs' {
  otel_logs_on
  # The bucket holds other bytes of the same size than the manifest names.
  printf '%s' 'fluent-bit package BYTES' >"$AWS_BUCKET/fluent-bit/fluent-bit-v1.0-linux-amd64.deb"
  run retry 2 fetch_and_verify_otel_logs
  [ "$status" -ne 0 ]
  [[ "$output" == *'digest mismatch for dependencies/fluent-bit/fluent-bit-v1.0-linux-amd64.deb'* ]]
  [[ "$output" == *'giving up after 2 attempts'* ]]
  refute grep -q '^dpkg' "$STUB_LOG"
  # main verifies (with the other dependencies) long before it installs.
  local body verify_line install_line
  body="$(declare -f main)"
  verify_line="$(grep -n 'retry 5 fetch_and_verify_otel_logs' <<<"$body" | cut -d: -f1)"
  install_line="$(grep -n 'install_otel_logs_packages' <<<"$body" | cut -d: -f1)"
  [ "$verify_line" -lt "$install_line" ]
}

@test 'install_otel_logs_packages installs libpq5, then Fluent Bit, with dpkg' {
  otel_logs_on
  fetch_and_verify_otel_logs
  install_otel_logs_packages
  local downloads="$PODMIN_TEST_ROOT/opt/podmin/downloads"
  [ "$(grep '^dpkg' "$STUB_LOG" | sed -n 1p)" = "dpkg -i $downloads/libpq5/libpq5-v1.0-linux-amd64.deb" ]
  [ "$(grep '^dpkg' "$STUB_LOG" | sed -n 2p)" = "dpkg -i $downloads/fluent-bit/fluent-bit-v1.0-linux-amd64.deb" ]
  [ "$(grep -c '^dpkg' "$STUB_LOG")" -eq 2 ]
}

@test 'a dpkg failure stops bootstrap naming the package, and Fluent Bit is not installed after libpq5 fails' {
  otel_logs_on
  fetch_and_verify_otel_logs
  export DPKG_FAIL=libpq5
  run install_otel_logs_packages
  [ "$status" -ne 0 ]
  [[ "$output" == *'error: dpkg could not install libpq5.deb (libpq5-v1.0-linux-amd64.deb)'* ]]
  refute grep -q '^dpkg .*fluent-bit-v1.0' "$STUB_LOG"
  [ "$(grep -c '^dpkg' "$STUB_LOG")" -eq 1 ]
}

@test 'with --otel-logs: fluent-bit.service never blocks the node and writes its configuration before each start' {
  otel_logs_on 's3://trust-bucket/otel/ca.pem' aws-secrets-manager
  configure_node
  local unit="$PODMIN_TEST_ROOT/etc/systemd/system/fluent-bit.service"
  grep -qx 'ExecStartPre=/opt/podmin/node/bin/node /opt/podmin/agent/podmin-agent.cjs otel-logs-config --provider aws --region us-east-1 --cluster example --nodegroup default --endpoint https://otlp.example.com:4318/v1/logs?tenant=a%%20b&x=1 --protocol http --mtls true --ca-file /run/podmin/telemetry/otel-logs-ca.pem --headers-provider aws-secrets-manager --out /run/fluent-bit/podmin.yaml' "$unit"
  grep -qx 'ExecStart=/opt/fluent-bit/bin/fluent-bit --config /run/fluent-bit/podmin.yaml' "$unit"
  grep -qx 'After=network-online.target podmin-agent.service' "$unit"
  grep -qx 'Restart=always' "$unit"
  grep -qx 'RestartSec=10' "$unit"
  grep -qx 'StartLimitIntervalSec=0' "$unit"
  grep -qx 'RuntimeDirectoryMode=0700' "$unit"
  # It waits for nothing it could hold up, and nothing waits for it.
  refute grep -q '^Requires=\|^BindsTo=\|^Before=\|^PartOf=\|^Requisite=' "$unit"
  refute grep -q 'fluent-bit' "$PODMIN_TEST_ROOT"/etc/systemd/system/{kubelet,podmin-agent,containerd,coredns}.service
  # The agent's part: the leaf (mtls=true) and the CA bundle object.
  grep -qx 'PODMIN_OTEL_LOGS_MTLS=true' "$PODMIN_TEST_ROOT/etc/podmin/node.env"
  grep -qx 'PODMIN_OTEL_LOGS_CA=s3://trust-bucket/otel/ca.pem' "$PODMIN_TEST_ROOT/etc/podmin/node.env"
  grep -qx 'POD_PREFIX=2600:1f14:aaaa:bb01:1234::/80' "$PODMIN_TEST_ROOT/etc/podmin/node.env"
}

@test 'with --otel-logs and neither ca= nor headers-secret: no CA file and no headers provider' {
  otel_logs_on
  otel_logs_mtls='false'
  configure_node
  local unit="$PODMIN_TEST_ROOT/etc/systemd/system/fluent-bit.service"
  grep -q -- '--protocol http --mtls false --out /run/fluent-bit/podmin.yaml$' "$unit"
  refute grep -q -- '--ca-file\|--headers-provider' "$unit"
  grep -qx 'PODMIN_OTEL_LOGS_MTLS=false' "$PODMIN_TEST_ROOT/etc/podmin/node.env"
  refute grep -q 'PODMIN_OTEL_LOGS_CA' "$PODMIN_TEST_ROOT/etc/podmin/node.env"
}

@test 'main installs the packages after the units are written and only queues Fluent Bit after the agent' {
  local body
  body="$(declare -f main)"
  local config_line install_line agent_line start_line
  config_line="$(grep -n 'write_configuration' <<<"$body" | cut -d: -f1)"
  install_line="$(grep -n 'install_otel_logs_packages' <<<"$body" | cut -d: -f1)"
  agent_line="$(grep -n 'systemctl enable --now podmin-agent.service' <<<"$body" | cut -d: -f1)"
  start_line="$(grep -n 'systemctl start --no-block fluent-bit.service' <<<"$body" | cut -d: -f1)"
  [ "$config_line" -lt "$install_line" ]
  [ "$agent_line" -lt "$start_line" ]
  refute grep -q 'enable --now fluent-bit' <<<"$body"
}

@test 'with --otel-logs every rendered unit, fluent-bit.service included, passes systemd-analyze verify' {
  otel_logs_on 's3://trust-bucket/otel/ca.pem' aws-parameter-store
  configure_node
  verify_root
  [ -x "$PODMIN_TEST_ROOT/opt/fluent-bit/bin/fluent-bit" ]
  run systemd-analyze verify --root="$PODMIN_TEST_ROOT" "$PODMIN_TEST_ROOT"/etc/systemd/system/*.service "$PODMIN_TEST_ROOT"/etc/systemd/system/*.mount
  [ "$output" = '' ]
  [ "$status" -eq 0 ]
}
