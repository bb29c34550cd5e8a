#!/usr/bin/env bats
# Runs install_jool of a rendered NAT64 user data script (infra/aws/nat64.sh.tftpl as EC2 holds
# it; tools/infra-tier.sh writes it out through emulator.py check-applied) for real: real tar,
# sha256sum, python3, install and modinfo, on module-like ELF objects built here. Only the
# cloud- and kernel-facing commands are stand-ins: aws_ serves s3://<bucket>/<key> from a local
# directory, uname and dpkg name the kernel and architecture, depmod and modprobe record their
# arguments, and jool is a no-op on PATH. Each case runs in its own mount namespace with tmpfs
# over /lib/modules and /var/tmp, so nothing reaches the host's module tree.
#
# Usage: NAT64_SCRIPT=<rendered nat64 script> bats infra/aws/test/nat64-install-jool.bats
# Needs root (unshare -m), gcc, objcopy and kmod's modinfo.

setup() {
  [[ -n ${NAT64_SCRIPT:-} && -f $NAT64_SCRIPT ]] || {
    echo "NAT64_SCRIPT must name a rendered nat64.sh.tftpl, got '${NAT64_SCRIPT:-}'" >&2
    return 1
  }
  # Sourcing the script must not run launch: its dispatch block is stripped, so it must be there.
  # shellcheck disable=SC2016
  if ! grep -qx 'case "${1:-launch}" in' "$NAT64_SCRIPT" || ! grep -qx 'esac' "$NAT64_SCRIPT"; then
    echo "$NAT64_SCRIPT lacks the case \"\${1:-launch}\" ... esac dispatch this test strips" >&2
    return 1
  fi
  ((EUID == 0)) || skip 'needs root: each case runs in a private mount namespace (unshare -m)'
  command -v unshare >/dev/null || skip 'unshare (util-linux) is not installed'
  unshare -m sh -c 'mount -t tmpfs tmpfs /var/tmp' 2>/dev/null ||
    skip 'unshare -m cannot mount a tmpfs here (no CAP_SYS_ADMIN?)'
  PATH="$PATH:/usr/sbin:/sbin"
  local tool
  for tool in gcc objcopy modinfo tar sha256sum python3; do
    command -v "$tool" >/dev/null || {
      echo "$tool is required (modinfo: Debian's kmod, see tools/setup/apt-deps.sh)" >&2
      return 1
    }
  done

  # Under /tmp, never /var/tmp: the namespace hides /var/tmp behind a tmpfs.
  JOOL_TEST="$(mktemp -d /tmp/podmin-nat64-jool.XXXXXX)"
  JOOL_ARCH="$(sed -n "s/^arch='\(.*\)'\$/\1/p" "$NAT64_SCRIPT")"
  JOOL_BUCKET_NAME="$(sed -n "s/^bucket='\(.*\)'\$/\1/p" "$NAT64_SCRIPT")"
  [[ $JOOL_ARCH == amd64 || $JOOL_ARCH == arm64 ]] || {
    echo "$NAT64_SCRIPT renders arch='$JOOL_ARCH'" >&2
    return 1
  }
  [[ -n $JOOL_BUCKET_NAME ]] || { echo "$NAT64_SCRIPT renders no bucket" >&2; return 1; }
  JOOL_KERNEL="6.12.48+deb13-cloud-$JOOL_ARCH"
  JOOL_BUCKET="$JOOL_TEST/bucket"
  JOOL_PATH="dependencies/jool/jool-v4.1.15-6.12.48+deb13-linux-$JOOL_ARCH.tar.gz"
  export JOOL_TEST JOOL_ARCH JOOL_KERNEL JOOL_BUCKET NAT64_SCRIPT
  mkdir -p "$JOOL_TEST/bin" "$JOOL_TEST/ns" "$JOOL_TEST/modules" "$JOOL_BUCKET/dependencies/jool"
  : >"$JOOL_TEST/calls"
  printf '#!/bin/sh\nexit 0\n' >"$JOOL_TEST/bin/jool"
  chmod 0755 "$JOOL_TEST/bin/jool"

  # Runs in the namespace: the real install_jool of the rendered script, with the stand-ins.
  cat >"$JOOL_TEST/install.sh" <<'DRIVER'
PATH="$JOOL_TEST/bin:$PATH:/usr/sbin:/sbin"
# shellcheck source=/dev/null
source <(sed '/^case "\${1:-launch}" in$/,/^esac$/d' "$NAT64_SCRIPT")
# aws_ s3 cp [--only-show-errors] s3://BUCKET/KEY DEST, from the local bucket directory.
aws_() {
  echo "aws_ $*" >>"$JOOL_TEST/calls"
  [[ $1 == s3 && $2 == cp ]] || { echo "aws_ stand-in: unexpected aws_ $*" >&2; return 1; }
  shift 2
  [[ $1 == --only-show-errors ]] && shift
  [[ $1 == "s3://$bucket/"* ]] || { echo "aws_ stand-in: $1 is not in s3://$bucket" >&2; return 1; }
  cp "$JOOL_BUCKET/${1#"s3://$bucket/"}" "$2"
}
uname() { if [[ $* == -r ]]; then echo "$JOOL_KERNEL"; else command uname "$@"; fi; }
dpkg() { if [[ $* == --print-architecture ]]; then echo "$JOOL_ARCH"; else command dpkg "$@"; fi; }
depmod() { echo "depmod $*" >>"$JOOL_TEST/calls"; }
modprobe() { echo "modprobe $*" >>"$JOOL_TEST/calls"; }
install_jool
DRIVER
}

teardown() {
  [[ -n ${JOOL_TEST:-} ]] && rm -rf "$JOOL_TEST"
}

# install_in_namespace: runs install.sh with tmpfs over /lib/modules and /var/tmp (an overlay
# gives /lib a modules directory where the host has none), then copies the module tree out to
# $JOOL_TEST/modules. Exits with install_jool's status.
install_in_namespace() {
  # shellcheck disable=SC2016
  unshare -m --propagation private bash -c '
    set -e
    mount -t tmpfs tmpfs /var/tmp
    if [[ ! -d /lib/modules ]]; then
      lib="$(readlink -f /lib)"
      mount -t tmpfs tmpfs "$JOOL_TEST/ns"
      mkdir "$JOOL_TEST/ns/upper" "$JOOL_TEST/ns/work"
      mount -t overlay overlay \
        -o "lowerdir=$lib,upperdir=$JOOL_TEST/ns/upper,workdir=$JOOL_TEST/ns/work" "$lib"
      mkdir /lib/modules
    fi
    mount -t tmpfs tmpfs /lib/modules
    set +e
    bash "$JOOL_TEST/install.sh"
    status=$?
    cp -a /lib/modules/. "$JOOL_TEST/modules/"
    exit "$status"'
}

# build_archive [METADATA-KERNEL] [MODULE VERMAGIC-KERNEL]: the jool-builds archive as it is
# packed (flat), with module-like ELF objects whose .modinfo names the kernel.
build_archive() {
  local meta_kernel=${1:-$JOOL_KERNEL} odd_module=${2:-} odd_kernel=${3:-} pack="$JOOL_TEST/pack"
  local module kernel
  mkdir -p "$pack"
  : >"$JOOL_TEST/empty.c"
  gcc -c "$JOOL_TEST/empty.c" -o "$JOOL_TEST/empty.o"
  for module in jool_common jool jool_siit; do
    kernel=$JOOL_KERNEL
    [[ $module == "$odd_module" ]] && kernel=$odd_kernel
    printf '%s\0' "vermagic=$kernel SMP mod_unload modversions" "name=$module" 'license=GPL v2' \
      >"$JOOL_TEST/$module.modinfo"
    objcopy --add-section ".modinfo=$JOOL_TEST/$module.modinfo" \
      --set-section-flags .modinfo=alloc,readonly "$JOOL_TEST/empty.o" "$pack/$module.ko"
    [ "$(modinfo -F vermagic "$pack/$module.ko")" = "$kernel SMP mod_unload modversions" ]
  done
  echo 'GPL-2.0' >"$pack/COPYING"
  echo 'Jool, built by podplane/jool-builds' >"$pack/NOTICE"
  echo 'https://github.com/NICMx/Jool/releases/tag/v4.1.15' >"$pack/SOURCE"
  printf '{"jool_version":"4.1.15","kernel_release":"%s","architecture":"%s","modules":["jool_common.ko","jool.ko","jool_siit.ko"]}\n' \
    "$meta_kernel" "$JOOL_ARCH" >"$pack/metadata.json"
  tar -czf "$JOOL_TEST/jool.tar.gz" -C "$pack" COPYING NOTICE SOURCE jool.ko jool_common.ko jool_siit.ko metadata.json
}

# publish [MANIFEST-ARCH]: the archive into the bucket and dependencies/manifest.json, with its
# jool entry under MANIFEST-ARCH (default: the script's arch).
publish() {
  local manifest_arch=${1:-$JOOL_ARCH} digest
  cp "$JOOL_TEST/jool.tar.gz" "$JOOL_BUCKET/$JOOL_PATH"
  digest="sha256:$(sha256sum "$JOOL_TEST/jool.tar.gz" | cut -d ' ' -f 1)"
  python3 - "$JOOL_BUCKET/dependencies/manifest.json" "$manifest_arch" "$JOOL_PATH" "$digest" \
    "$(stat -c %s "$JOOL_TEST/jool.tar.gz")" <<'PY'
import json, sys
out, arch, path, digest, size = sys.argv[1:]
tag = "jool-4.1.15-kernel-6.12.48+deb13"
manifest = {"dependencies": {
    "containerd": {arch: {"version": "2.1.4", "url": "https://example.invalid/containerd.tar.gz",
                          "path": "dependencies/containerd/containerd-v2.1.4-linux-" + arch + ".tar.gz",
                          "digest": "sha256:" + "0" * 64, "size": 1}},
    "jool": {arch: {"version": "4.1.15-6.12.48+deb13",
                    "url": f"https://github.com/podplane/jool-builds/releases/download/{tag}/jool-4.1.15-6.12.48+deb13-{arch}.tar.gz",
                    "path": path, "digest": digest, "size": int(size)}},
}}
with open(out, "w", encoding="utf-8") as f:
    json.dump(manifest, f, indent=2)
PY
}

# nothing_installed: no module under /lib/modules, neither depmod nor modprobe ran.
nothing_installed() {
  [ -z "$(find "$JOOL_TEST/modules" -mindepth 1)" ]
  ! grep -Eq '^(depmod|modprobe) ' "$JOOL_TEST/calls"
}

@test 'install_jool installs the three checked modules for the running kernel' {
  build_archive
  publish
  run install_in_namespace
  echo "$output"
  [ "$status" -eq 0 ]
  local dir="$JOOL_TEST/modules/$JOOL_KERNEL/extra/jool" module
  [ "$(find "$JOOL_TEST/modules" -type f | sort)" = "$(printf '%s\n' "$dir/jool.ko" "$dir/jool_common.ko" "$dir/jool_siit.ko")" ]
  for module in jool_common jool jool_siit; do
    [ "$(stat -c %a "$dir/$module.ko")" = 644 ]
    cmp "$dir/$module.ko" "$JOOL_TEST/pack/$module.ko"
  done
  grep -qx "aws_ s3 cp --only-show-errors s3://$JOOL_BUCKET_NAME/dependencies/manifest.json /var/tmp/podmin-jool/manifest.json" "$JOOL_TEST/calls"
  grep -qx "aws_ s3 cp --only-show-errors s3://$JOOL_BUCKET_NAME/$JOOL_PATH /var/tmp/podmin-jool/jool.tar.gz" "$JOOL_TEST/calls"
  [ "$(grep -E '^(depmod|modprobe) ' "$JOOL_TEST/calls")" = "$(printf 'depmod -a %s\nmodprobe jool' "$JOOL_KERNEL")" ]
}

@test 'install_jool refuses an archive whose bytes do not match the manifest digest' {
  build_archive
  publish
  printf 'tampered' >>"$JOOL_BUCKET/$JOOL_PATH"
  run install_in_namespace
  echo "$output"
  [ "$status" -eq 1 ]
  [[ $output == *"jool archive $JOOL_PATH does not match sha256:"* ]]
  nothing_installed
}

@test 'install_jool refuses an archive built for another kernel' {
  build_archive "6.12.41+deb13-cloud-$JOOL_ARCH"
  publish
  run install_in_namespace
  echo "$output"
  [ "$status" -eq 1 ]
  [[ $output == *"jool archive $JOOL_PATH was not built for kernel $JOOL_KERNEL ($JOOL_ARCH)"* ]]
  nothing_installed
}

@test 'install_jool refuses a module whose vermagic names another kernel' {
  build_archive "$JOOL_KERNEL" jool_siit "6.12.41+deb13-cloud-$JOOL_ARCH"
  publish
  run install_in_namespace
  echo "$output"
  [ "$status" -eq 1 ]
  [[ $output == *"jool_siit.ko of $JOOL_PATH does not match kernel $JOOL_KERNEL"* ]]
  nothing_installed
}

@test 'install_jool refuses a manifest without a jool entry for its architecture' {
  local other=arm64
  [[ $JOOL_ARCH == arm64 ]] && other=amd64
  build_archive
  publish "$other"
  run install_in_namespace
  echo "$output"
  [ "$status" -eq 1 ]
  [[ $output == *"dependencies/manifest.json has no jool entry for $JOOL_ARCH"* ]]
  nothing_installed
}
