#!/usr/bin/env bash
# shellcheck disable=SC2317  # cleanup and init_backend run through trap and check
# Infra tier: the AWS module (infra/aws) under a real OpenTofu and a real AWS provider, both
# built from their Go modules by tools/infra-stack/build.sh and served offline from a provider
# filesystem mirror.
#   1. tofu fmt -check on the module.
#   2. Every variable validation, with good and bad tfvars (infra/aws/test/cases.json), through
#      `tofu plan` of the module's variables alone (needs tofu only).
#   3. For several NodeGroup/NAT64 combinations: init with the S3 backend (use_lockfile) in the
#      AWS-API emulator on loopback, validate, plan, and check the plan (plan-assert.mjs).
#   4. Apply, re-plan (no changes), plan a new NAT64 generation, destroy, against the emulator,
#      for a new VPC and for a reused one (which must survive destroy). Each NAT64 user data
#      script EC2 holds must parse and pass shellcheck, and one's install_jool runs for real
#      (infra/aws/test/nat64-install-jool.bats: needs root for unshare -m, gcc, objcopy, modinfo).
# Where the emulator lacks an API, the module is covered by the plan checks instead (see
# infra/aws/README.md). Prints `SKIPPED infra: <reason>` for what cannot run, and a jest-style
# `Tests:` line.
#   PODMIN_INFRA_BUILD_PROVIDER=never  skip building the AWS provider when it is not cached
#                                      (the default under CI=true: the build outlasts a CI run)
#   PODMIN_INFRA_KEEP=1                keep the work directory (module copies, plans, logs)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
cache="${PODMIN_INFRA_STACK_DIR:-${PODMIN_DEV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/podmin-dev}/infra-stack}"
# shellcheck source=infra-stack/versions.env disable=SC1091
source tools/infra-stack/versions.env
passed=0 failed=0
work=''
emulator_state=''

summary() {
  echo "infra: ${passed} checks passed, ${failed} failed"
  if ((failed > 0)); then
    echo "Tests: ${failed} failed, ${passed} passed, $((passed + failed)) total"
  else
    echo "Tests: ${passed} passed, ${passed} total"
  fi
}
cleanup() {
  set +e
  [[ -n $emulator_state ]] && bash tools/emulator/stop.sh "$emulator_state" >/dev/null 2>&1
  if [[ -n $work && -n ${PODMIN_INFRA_KEEP:-} ]]; then
    echo "infra: kept $work" >&2
  elif [[ -n $work ]]; then
    rm -rf "$work"
  fi
}
trap cleanup EXIT
pass() {
  passed=$((passed + 1))
  echo "  ✓ $1"
}
fail() {
  failed=$((failed + 1))
  echo "  ✕ $1"
  [[ -n ${2:-} && -f $2 ]] && tail -n 25 "$2" | sed 's/^/      /'
}
# check NAME CMD...: passes when CMD succeeds.
check() {
  local name=$1
  shift
  if "$@" >"$work/last.log" 2>&1; then pass "$name"; else fail "$name" "$work/last.log"; fi
}
finish() {
  summary
  [[ $failed -eq 0 ]]
  exit
}

command -v node >/dev/null || { echo "SKIPPED infra: node is required"; exit 0; }
if ! out=$(bash tools/infra-stack/build.sh tofu 2>&1); then
  echo "$out" | tail -n 20 >&2
  echo "SKIPPED infra: OpenTofu could not be built from its Go module (see above)"
  exit 0
fi
tofu="$cache/bin/tofu"
work=$(mktemp -d "${TMPDIR:-/tmp}/podmin-infra-tier.XXXXXX")
export TF_IN_AUTOMATION=1 TF_INPUT=0 CHECKPOINT_DISABLE=1
# Never the operator's CLI configuration; the provider comes from the mirror only.
: >"$work/empty.tofurc"
export TF_CLI_CONFIG_FILE="$work/empty.tofurc"
unset TF_PLUGIN_CACHE_DIR TF_WORKSPACE
echo "infra: $("$tofu" version | head -n 1)"

# 1. Formatting.
check "tofu fmt -check -recursive infra/aws" "$tofu" fmt -check -recursive -diff infra/aws

# 2. Variable validations: the module's variables.tf alone plans without any provider.
node infra/aws/test/write-cases.mjs "$work/cases"
mkdir -p "$work/vars"
cp infra/aws/variables.tf "$work/vars/"
check "tofu init of the variables alone" "$tofu" -chdir="$work/vars" init -input=false
for f in "$work"/cases/good-*.tfvars.json; do
  name=$(basename "$f" .tfvars.json)
  check "accepts tfvars ${name#good-}" "$tofu" -chdir="$work/vars" plan -input=false -lock=false -var-file="$f"
done
for f in "$work"/cases/bad-*.tfvars.json; do
  name=$(basename "$f" .tfvars.json)
  expect=$(<"${f%.tfvars.json}.expect")
  if "$tofu" -chdir="$work/vars" plan -input=false -lock=false -no-color -var-file="$f" >"$work/last.log" 2>&1; then
    fail "rejects tfvars ${name#bad-} (plan succeeded)" "$work/last.log"
  elif tr -s ' \n│' ' ' <"$work/last.log" | grep -Eq "$expect"; then
    pass "rejects tfvars ${name#bad-}: $expect"
  else
    fail "rejects tfvars ${name#bad-} with \"$expect\"" "$work/last.log"
  fi
done

# 3. The provider, from the offline mirror.
provider="$cache/providers/registry.opentofu.org/hashicorp/aws/${AWS_PROVIDER_VERSION}/linux_amd64/terraform-provider-aws_v${AWS_PROVIDER_VERSION}"
build_provider=${PODMIN_INFRA_BUILD_PROVIDER:-auto}
if [[ $build_provider == auto && -n ${CI:-} ]]; then
  # Building the provider takes longer than a whole CI run may (tools/infra-stack/versions.env);
  # CI uses the cache a developer's test-all or tools/infra-stack/build.sh filled.
  build_provider=never
fi
if [[ ! -e $provider && $build_provider == never ]]; then
  echo "SKIPPED infra: the AWS provider ${AWS_PROVIDER_VERSION} is not cached and is not built here (CI or PODMIN_INFRA_BUILD_PROVIDER=never; run tools/infra-stack/build.sh aws-provider); validate, plan, apply and destroy did not run"
  finish
fi
if ! out=$(nice -n 10 bash tools/infra-stack/build.sh aws-provider 2>&1); then
  echo "$out" | tail -n 20 >&2
  echo "SKIPPED infra: the AWS provider could not be built from its Go module (see above); validate, plan, apply and destroy did not run"
  finish
fi
export TF_CLI_CONFIG_FILE="$cache/tofurc"
export TF_PLUGIN_CACHE_DIR="$work/plugins"
mkdir -p "$TF_PLUGIN_CACHE_DIR"

# The emulator: test-all's, or one of our own.
if [[ -z ${PODMIN_TEST_AWS_ENDPOINT:-} ]]; then
  emulator_state="$work/emulator"
  if ! exports=$(bash tools/emulator/start.sh "$emulator_state" 2>"$work/emulator.err"); then
    cat "$work/emulator.err" >&2
    emulator_state=''
    echo "SKIPPED infra: the AWS-API emulator did not start; plan, apply and destroy did not run"
    finish
  fi
  eval "$exports"
fi
endpoint=$PODMIN_TEST_AWS_ENDPOINT
region=us-east-1
# Fake credentials for the emulator; the endpoint reaches the provider only through the
# environment and the test-only override file below, never through the shipped module.
export AWS_ENDPOINT_URL=$endpoint AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing
export AWS_REGION=$region AWS_DEFAULT_REGION=$region AWS_EC2_METADATA_DISABLED=true
unset AWS_PROFILE AWS_SESSION_TOKEN
moto_python="$(bash tools/setup/python-tools.sh python)"
aws_py() { "$moto_python" "$root/infra/aws/test/emulator.py" "$@"; }

# module_dir NAME TFVARS: a copy of the module as setup writes it, plus the test-only override.
module_dir() {
  local dir="$work/$1"
  mkdir -p "$dir"
  cp infra/aws/*.tf infra/aws/*.tftpl "$dir/"
  cp "$2" "$dir/podmin.auto.tfvars.json"
  # Test-only provider settings (no real credentials or metadata service), shared with the
  # CLI's setup e2e.
  cp infra/aws/test/emulator-overrides/podmin_test_override.tf "$dir/"
  echo "$dir"
}
# init_backend DIR BUCKET: the backend flags podmin setup passes, plus the emulator's.
init_backend() {
  aws_py create-bucket "$2" >/dev/null
  "$tofu" -chdir="$1" init -input=false -no-color \
    -backend-config="bucket=$2" -backend-config="key=tfstate/podmin.tfstate" \
    -backend-config="region=$region" -backend-config="use_lockfile=true" \
    -backend-config="use_path_style=true" -backend-config="endpoints={s3=\"$endpoint\"}" \
    -backend-config="skip_credentials_validation=true" -backend-config="skip_requesting_account_id=true" \
    -backend-config="skip_metadata_api_check=true"
}
plan_checks() {
  local dir=$1 label=$2
  "$tofu" -chdir="$dir" show -json plan.out >"$dir/plan.json" 2>"$work/last.log" || { fail "$label: show -json" "$work/last.log"; return; }
  local status=0 line
  node infra/aws/test/plan-assert.mjs "$dir/plan.json" "$dir/podmin.auto.tfvars.json" >"$dir/plan-assert.out" 2>&1 || status=$?
  while IFS= read -r line; do
    case "$line" in
      PASS\ *) pass "$label: ${line#PASS }" ;;
      FAIL\ *) fail "$label: ${line#FAIL }" ;;
    esac
  done <"$dir/plan-assert.out"
  if ((status != 0)) && ! grep -q '^FAIL ' "$dir/plan-assert.out"; then
    fail "$label: plan-assert.mjs crashed" "$dir/plan-assert.out"
  fi
}

for f in "$work"/cases/combo-*.tfvars.json; do
  combo=$(basename "$f" .tfvars.json)
  combo=${combo#combo-}
  dir=$(module_dir "plan-$combo" "$f")
  check "$combo: init with the S3 backend from the offline mirror" init_backend "$dir" "podmin-plan-$combo"
  check "$combo: tofu validate" "$tofu" -chdir="$dir" validate -no-color
  if "$tofu" -chdir="$dir" plan -input=false -no-color -out=plan.out >"$work/last.log" 2>&1; then
    pass "$combo: tofu plan"
    plan_checks "$dir" "$combo"
  else
    fail "$combo: tofu plan" "$work/last.log"
  fi
done

# 4. Apply and destroy. See infra/aws/README.md for what the emulator lacks.
# replan DIR LABEL NAME [--generation]: plan the applied module and check the plan.
replan() {
  local dir=$1 label=$2 name=$3 line status=0
  if ! "$tofu" -chdir="$dir" plan -input=false -no-color -out="$name.out" >"$dir/$name.log" 2>&1 ||
    ! "$tofu" -chdir="$dir" show -json "$name.out" >"$dir/$name.json" 2>>"$dir/$name.log"; then
    fail "$label: plan ($name)" "$dir/$name.log"
    return
  fi
  line=$(node infra/aws/test/replan-assert.mjs "$dir/$name.json" "${@:4}" 2>&1) || status=$?
  case "$line" in
    PASS\ *) pass "$label: ${line#PASS }" ;;
    FAIL\ *) fail "$label: ${line#FAIL }" ;;
    *) fail "$label: replan-assert.mjs crashed ($status): $line" ;;
  esac
}

# nat64_script_checks LABEL DIR: each NAT64 user data script check-applied wrote (as EC2 holds
# it) parses and passes shellcheck; the first one's install_jool runs for real under
# infra/aws/test/nat64-install-jool.bats.
nat64_script_checks() {
  local label=$1 scripts=() script key
  shopt -s nullglob
  scripts=("$2"/*.sh)
  shopt -u nullglob
  ((${#scripts[@]} > 0)) || { fail "$label: check-applied wrote no NAT64 script to $2"; return; }
  for script in "${scripts[@]}"; do
    key=$(basename "$script" .sh)
    check "$label: NAT64 $key user data parses (bash -n)" bash -n "$script"
    check "$label: NAT64 $key user data passes shellcheck" shellcheck --severity=style "$script"
  done
  key=$(basename "${scripts[0]}" .sh)
  if ! NAT64_SCRIPT=${scripts[0]} bats --tap infra/aws/test/nat64-install-jool.bats >"$work/last.log" 2>&1; then
    fail "$label: NAT64 $key install_jool (nat64-install-jool.bats)" "$work/last.log"
  elif grep -q '# skip' "$work/last.log"; then
    echo "SKIPPED infra: $label: NAT64 $key install_jool: $(grep -m 1 -o '# skip.*' "$work/last.log")"
  else
    pass "$label: NAT64 $key install_jool installs checked modules, refuses bad archives (bats)"
  fi
}

apply_cycle() {
  local label=$1 tfvars=$2 bucket=$3 dir
  dir=$(module_dir "apply-$label" "$tfvars")
  # moto 5.2.5 ignores ModifySubnetAttribute for three subnet attributes, so the provider would
  # wait forever for them, and cannot launch an instance into an IPv6-only subnet (its ENI code
  # needs a private IPv4), so the groups are applied with no capacity: max_size keeps the
  # NodeGroup's size. The plans above check the module's real values; check-applied reads the
  # launch templates EC2 stored.
  cp infra/aws/test/emulator-overrides/podmin_emulator_override.tf "$dir/"
  check "$label: init" init_backend "$dir" "$bucket"
  if ! "$tofu" -chdir="$dir" apply -input=false -no-color -auto-approve >"$work/apply-$label.log" 2>&1; then
    fail "$label: tofu apply" "$work/apply-$label.log"
    "$tofu" -chdir="$dir" destroy -input=false -no-color -auto-approve >/dev/null 2>&1 || true
    return
  fi
  pass "$label: tofu apply"
  check "$label: state is in the bucket at tfstate/podmin.tfstate, no lock left" aws_py state-stored "$bucket"
  "$tofu" -chdir="$dir" output -json >"$dir/outputs.json"
  check "$label: outputs name the VPC, subnets and ASGs" aws_py check-outputs "$dir/outputs.json" "$tfvars"
  check "$label: emulator holds tagged ENIs, IPv6-native subnets and ASGs" aws_py check-applied "$dir/outputs.json" "$tfvars" "$dir/nat64-scripts"
  nat64_script_checks "$label" "$dir/nat64-scripts"
  # Re-plans: unchanged inputs, then a new launch generation, applied: every translator's
  # launch template carries it and its group starts an instance refresh (launch before
  # terminate; tools/emulator/serve.py adds the refresh API moto lacks).
  replan "$dir" "$label" replan
  sed -i 's/"nat64_generation": "[^"]*"/"nat64_generation": "gen-2"/' "$dir/podmin.auto.tfvars.json"
  replan "$dir" "$label" regen --generation
  check "$label: apply the new launch generation" "$tofu" -chdir="$dir" apply -input=false -no-color regen.out
  check "$label: each translator launches gen-2 and its group ran an instance refresh" aws_py check-refreshed "$dir/outputs.json" gen-2
  check "$label: tofu destroy" "$tofu" -chdir="$dir" destroy -input=false -no-color -auto-approve
  check "$label: nothing of the cluster is left in the emulator" aws_py check-destroyed "$dir/outputs.json" "$tfvars"
}

apply_cycle new-vpc "$work/cases/combo-mixed-arch-shared-and-dedicated.tfvars.json" podmin-apply-new
reused=$(aws_py create-vpc 10.42.0.0/16)
node -e '
  const fs = require("fs"); const v = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
  v.existing_vpc_id = process.argv[2]; v.vpc_cidr = "10.42.0.0/16"; v.cluster = "reuse";
  fs.writeFileSync(process.argv[3], JSON.stringify(v, null, 2));
' "$work/cases/combo-shared-nat64-two-zones.tfvars.json" "$reused" "$work/reuse.tfvars.json"
apply_cycle reused-vpc "$work/reuse.tfvars.json" podmin-apply-reuse
check "reused-vpc: the reused VPC survives destroy" aws_py vpc-exists "$reused"
finish
