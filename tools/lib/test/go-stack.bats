#!/usr/bin/env bats
# Runs tools/node-stack/build.sh and tools/infra-stack/build.sh with a stand-in go (stubs/go)
# against a temporary cache: what tools/lib/go-stack.sh builds, caches, logs and refuses.

setup() {
  TEST_TMP="$(mktemp -d)"
  export STUB_LOG="$TEST_TMP/calls.log" STUB_MODULE_DIR="$TEST_TMP/module"
  export PODMIN_NODE_STACK_DIR="$TEST_TMP/node" PODMIN_INFRA_STACK_DIR="$TEST_TMP/infra"
  : >"$STUB_LOG"
  PATH="$BATS_TEST_DIRNAME/stubs:$PATH"
  TOOLS="$BATS_TEST_DIRNAME/../.."
  # shellcheck source=../../node-stack/versions.env disable=SC1091
  source "$TOOLS/node-stack/versions.env"
  # shellcheck source=../../infra-stack/versions.env disable=SC1091
  source "$TOOLS/infra-stack/versions.env"
}

teardown() {
  rm -rf "$TEST_TMP"
}

@test "a component is built once, linked into bin, then reused from the cache" {
  run bash "$TOOLS/node-stack/build.sh" crictl
  [ "$status" -eq 0 ]
  [[ "$output" == *"node-stack: crictl ${CRICTL_VERSION}: building sigs.k8s.io/cri-tools/cmd/crictl"* ]]
  [[ "$output" == *"node-stack: crictl ${CRICTL_VERSION}: built in "* ]]
  [ -f "$PODMIN_NODE_STACK_DIR/crictl-${CRICTL_VERSION}/.built" ]
  [ -L "$PODMIN_NODE_STACK_DIR/bin/crictl" ]
  grep -qx "go install -trimpath sigs.k8s.io/cri-tools/cmd/crictl@${CRICTL_VERSION}" "$STUB_LOG"

  : >"$STUB_LOG"
  run bash "$TOOLS/node-stack/build.sh" crictl
  [ "$status" -eq 0 ]
  [[ "$output" == *"crictl ${CRICTL_VERSION}: cached in $PODMIN_NODE_STACK_DIR/crictl-${CRICTL_VERSION}"* ]]
  [ ! -s "$STUB_LOG" ]
}

@test "a failed build names the component, shows its log's tail and leaves nothing marked built" {
  STUB_GO_FAIL=install run bash "$TOOLS/node-stack/build.sh" crictl
  [ "$status" -eq 1 ]
  [[ "$output" == *"crictl ${CRICTL_VERSION}: build FAILED; last lines of $PODMIN_NODE_STACK_DIR/crictl-${CRICTL_VERSION}.log:"* ]]
  [[ "$output" == *"stub go: install failed on purpose"* ]]
  [ ! -e "$PODMIN_NODE_STACK_DIR/crictl-${CRICTL_VERSION}/.built" ]
}

@test "kubelet builds from a wrapper module pinning each staging module, then drops it" {
  run bash "$TOOLS/node-stack/build.sh" kubelet
  [ "$status" -eq 0 ]
  local dir="$PODMIN_NODE_STACK_DIR/kubelet-${KUBELET_VERSION}" staging=${KUBELET_VERSION/v1./v0.}
  grep -qx "go mod edit -replace=k8s.io/api=k8s.io/api@${staging}" "$STUB_LOG"
  grep -qx "go mod edit -replace=k8s.io/client-go=k8s.io/client-go@${staging}" "$STUB_LOG"
  [ -f "$dir/kubelet" ] && [ -L "$PODMIN_NODE_STACK_DIR/bin/kubelet" ]
  [ ! -e "$dir/src" ]
}

@test "a failing step of a from-source build fails it before go build runs" {
  STUB_GO_FAIL="mod tidy" run bash "$TOOLS/node-stack/build.sh" kubelet
  [ "$status" -eq 1 ]
  [[ "$output" == *"kubelet ${KUBELET_VERSION}: build FAILED"* ]]
  run grep -q "^go build" "$STUB_LOG"
  [ "$status" -eq 1 ]
}

@test "the infrastructure engine: tofu and the AWS provider in its filesystem mirror" {
  run bash "$TOOLS/infra-stack/build.sh"
  [ "$status" -eq 0 ]
  [[ "$output" == *"infra-stack: tofu ${OPENTOFU_VERSION}: built in "* ]]
  [ -x "$PODMIN_INFRA_STACK_DIR/bin/tofu" ] || [ -f "$PODMIN_INFRA_STACK_DIR/bin/tofu" ]
  local name="terraform-provider-aws_v${AWS_PROVIDER_VERSION}"
  [ -f "$PODMIN_INFRA_STACK_DIR/aws-provider-${AWS_PROVIDER_VERSION}/${name}" ]
  [ -L "$PODMIN_INFRA_STACK_DIR/providers/registry.opentofu.org/hashicorp/aws/${AWS_PROVIDER_VERSION}/linux_amd64/${name}" ]
  grep -q "filesystem_mirror" "$PODMIN_INFRA_STACK_DIR/tofurc"
  [ ! -e "$PODMIN_INFRA_STACK_DIR/tofu-${OPENTOFU_VERSION}/src" ]
}

@test "without PODMIN_<STACK>_DIR a stack caches under PODMIN_DEV_CACHE, else XDG_CACHE_HOME" {
  unset PODMIN_NODE_STACK_DIR PODMIN_INFRA_STACK_DIR
  PODMIN_DEV_CACHE="$TEST_TMP/dev" run bash "$TOOLS/node-stack/build.sh" crictl
  [ "$status" -eq 0 ]
  [ -L "$TEST_TMP/dev/node-stack/bin/crictl" ]
  PODMIN_DEV_CACHE= XDG_CACHE_HOME="$TEST_TMP/xdg" run bash "$TOOLS/infra-stack/build.sh" tofu
  [ "$status" -eq 0 ]
  [ -L "$TEST_TMP/xdg/podmin-dev/infra-stack/bin/tofu" ]
}

@test "an unknown component is refused with the known ones" {
  run bash "$TOOLS/node-stack/build.sh" nonesuch
  [ "$status" -eq 2 ]
  [[ "$output" == *"unknown component nonesuch; known: containerd cni crictl coredns kubelet"* ]]
}

@test "without Go the build stops first, naming what it would build" {
  if PATH=/usr/bin:/bin command -v go >/dev/null; then skip "go is installed in /usr/bin or /bin"; fi
  PATH=/usr/bin:/bin run bash "$TOOLS/infra-stack/build.sh" tofu
  [ "$status" -eq 1 ]
  [ "$output" = "infra-stack: Go is required to build the infrastructure engine" ]
}
