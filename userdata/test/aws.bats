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
  printf '0e:00:00:00:00:02/\n0e:00:00:00:00:01/\n' >"$macs/_list"
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
  ! grep -q 'assign-ipv6-addresses' "$STUB_LOG"
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
  ! grep -q 'assign-ipv6-addresses' "$STUB_LOG"
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
  grep -q 'staticPodPath: /etc/podmin/manifests' "$etc/podmin/kubelet/config.yaml"
  grep -q '  - 2600:1f14:aaaa:bb01::10' "$etc/podmin/kubelet/config.yaml"
  grep -q 'runtime-endpoint: unix:///run/containerd/containerd.sock' "$etc/crictl.yaml"
  grep -q 'bind 2600:1f14:aaaa:bb01::10' "$etc/coredns/Corefile"
  grep -q 'forward . 127.0.0.1:1053' "$etc/coredns/Corefile"
  grep -q '"subnet": "2600:1f14:aaaa:bb01:1234::/80"' "$etc/cni/net.d/10-podmin.conflist"
  grep -q 'POD_PREFIX=2600:1f14:aaaa:bb01:1234::/80' "$etc/podmin/node.env"
  grep -q 'net.ipv6.conf.all.forwarding = 1' "$etc/sysctl.d/90-podmin.conf"
  grep -q 'from ${POD_PREFIX} lookup 180' "$etc/systemd/system/podmin-pod-network.service"
  grep -q -- '--provider aws --bucket podmin-example --region us-east-1 --cluster example --nodegroup default --ipv6-prefix ${POD_PREFIX}$' "$etc/systemd/system/podmin-agent.service"
  grep -q '^After=containerd.service podmin-pod-network.service podmin-agent.service coredns.service$' "$etc/systemd/system/kubelet.service"
  grep -q '^Where=/run/podmin$' "$etc/systemd/system/run-podmin.mount"
  # No --workload-ca-publish: the agent's environment names no destination.
  ! grep -q 'PODMIN_WORKLOAD_CA_PUBLISH' "$etc/podmin/node.env"
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
