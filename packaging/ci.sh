#!/usr/bin/env bash
# CI packaging checks, run by .ci/run as root on a fresh Debian machine: installs the cross
# toolchain, builds both static binaries and their archives, smoke-tests the x86_64 binary
# natively and the aarch64 one under qemu, checks the systemd unit's exposure rating and
# smoke-tests the x86_64 binary under the unit's sandbox (with and without a shell channel),
# builds the container image and checks the binary taken out of it, builds the Debian packages,
# installs the amd64 one, verifies the systemd unit, and removes the package again (the data
# directory stays). Prints how long each step took.
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET_DIR=${CARGO_TARGET_DIR:-target}
DIST=${DIST:-dist}
export DIST
# `systemd-analyze security` rates the unit from 0 (locked down) to 10; ten times the worst
# rating accepted (issue 14.15 brought it from 1.8 to 1.1).
EXPOSURE_THRESHOLD=${EXPOSURE_THRESHOLD:-11}

timings=()
step() {
  local label=$1 start=$SECONDS
  shift
  echo "== packaging: $label"
  "$@"
  timings+=("$(printf '%4ds  %s' $((SECONDS - start)) "$label")")
}

install_tools() {
  if command -v apt-get >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static musl-tools file systemd \
      dpkg-dev lintian curl python3 libseccomp2 podman ca-certificates >/dev/null
  fi
  rustup target add x86_64-unknown-linux-musl aarch64-unknown-linux-musl
}

smoke_both() {
  packaging/smoke-test.sh "$TARGET_DIR/x86_64-unknown-linux-musl/dist/overdue"
  packaging/smoke-test.sh "$TARGET_DIR/aarch64-unknown-linux-musl/dist/overdue" qemu-aarch64-static
}

unit_exposure() {
  # The rating of the unit file itself (--offline), as an installed unit would get it.
  systemd-analyze security --offline=yes --threshold="$EXPOSURE_THRESHOLD" \
    packaging/overdue.service | tail -1
}

smoke_sandboxed() {
  local bin="$TARGET_DIR/x86_64-unknown-linux-musl/dist/overdue"
  # systemd cannot start services here: unit-sandbox.py applies the unit's system call filter,
  # its /proc settings and a private user namespace, and says which.
  packaging/unit-sandbox.py --verbose true
  packaging/smoke-test.sh "$bin" packaging/unit-sandbox.py
  SMOKE_SHELL=yes packaging/smoke-test.sh "$bin" packaging/unit-sandbox.py
}

container_image() {
  # podman builds and saves the image but cannot start containers on these machines; the
  # checker unpacks the saved image and runs its binary.
  packaging/build-image.sh "$TARGET_DIR/x86_64-unknown-linux-musl/dist/overdue"
  packaging/check-image.py "$(ls "$DIST"/overdue-image-*-amd64.tar)"
}

build_debs() {
  for archive in "$DIST"/overdue-*-unknown-linux-musl.tar.gz; do
    packaging/build-deb.sh "$archive"
  done
  local deb
  deb=$(ls "$DIST"/overdue_*_amd64.deb)
  dpkg-deb --info "$deb"
  dpkg-deb --contents "$deb"
  if command -v lintian >/dev/null; then
    # Warnings are shown, errors fail the build.
    lintian --fail-on error --tag-display-limit 0 "$DIST"/overdue_*.deb
  fi
}

install_and_verify() {
  [ "$(id -u)" = 0 ] || { echo "installing the package needs root" >&2; return 1; }
  local deb data_existed=yes
  deb=$(ls "$DIST"/overdue_*_amd64.deb)
  dpkg -i "$deb"
  overdue --version
  [ "$(overdue --version)" = "$("$TARGET_DIR/x86_64-unknown-linux-musl/dist/overdue" --version)" ]
  test -f /etc/overdue/overdue.env
  test -f /usr/share/man/man1/overdue.1.gz
  test -f /usr/share/bash-completion/completions/overdue
  # The installed unit, with its binary where ExecStart points, and the shipped one (the same
  # file) must both verify.
  systemd-analyze verify /lib/systemd/system/overdue.service
  systemd-analyze verify packaging/overdue.service
  cmp /lib/systemd/system/overdue.service packaging/overdue.service

  # Removal keeps the data directory.
  [ -e /var/lib/overdue ] || { data_existed=no; mkdir -p /var/lib/overdue; }
  touch /var/lib/overdue/ci-marker
  dpkg --purge overdue
  test ! -e /usr/bin/overdue
  test -f /var/lib/overdue/ci-marker
  rm -f /var/lib/overdue/ci-marker
  if [ "$data_existed" = no ]; then rmdir /var/lib/overdue; fi
}

step "install tools" install_tools
step "build-release.sh (both targets)" packaging/build-release.sh
step "smoke tests (x86_64 native, aarch64 under qemu)" smoke_both
step "systemd-analyze security (exposure at most $EXPOSURE_THRESHOLD/10)" unit_exposure
step "smoke tests under the unit's sandbox (without and with a shell channel)" smoke_sandboxed
step "container image (podman build and save, checked unpacked)" container_image
step "Debian packages" build_debs
step "install, systemd-analyze verify, purge" install_and_verify
echo "== packaging: timings"
printf '%s\n' "${timings[@]}"
