#!/usr/bin/env bash
# Builds the static release binaries and their archives:
#   dist/overdue-<version>-<target>.tar.gz   for each target, and dist/SHA256SUMS.
# Each archive holds the binary, the systemd unit, an example env file, shell completions
# (bash, zsh, fish), the manual pages, README.md and LICENSE.
#
# Needs: rustup with the musl targets (rustup target add x86_64-unknown-linux-musl
# aarch64-unknown-linux-musl), and on Debian: musl-tools (C code for x86_64, e.g. ring),
# gcc-aarch64-linux-gnu (linker and C compiler for aarch64), file.
#
# Usage: packaging/build-release.sh [TARGET...]   (default: both targets)
# Environment: DIST (output directory, default dist), CARGO_TARGET_DIR as cargo reads it,
# SOURCE_DATE_EPOCH (archive timestamps; default: the last commit's time).
set -euo pipefail
cd "$(dirname "$0")/.."

PROFILE=dist
DIST=${DIST:-dist}
TARGET_DIR=${CARGO_TARGET_DIR:-target}
if [ $# -gt 0 ]; then
  TARGETS=("$@")
else
  TARGETS=(x86_64-unknown-linux-musl aarch64-unknown-linux-musl)
fi

die() { echo "build-release: $*" >&2; exit 1; }
need() { command -v "$1" >/dev/null || die "$1 not found; install $2"; }

need file "the Debian package file"
installed_targets=$(rustup target list --installed)

# Per target: the linker and the C compiler and archiver that build scripts (cc crate: ring
# and the like) use. Each can be overridden from the environment.
configure() {
  case $1 in
    x86_64-unknown-linux-musl)
      export CC_x86_64_unknown_linux_musl=${CC_x86_64_unknown_linux_musl:-musl-gcc}
      export AR_x86_64_unknown_linux_musl=${AR_x86_64_unknown_linux_musl:-ar}
      need "$CC_x86_64_unknown_linux_musl" "the Debian package musl-tools"
      ;;
    aarch64-unknown-linux-musl)
      export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_LINKER=${CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_LINKER:-aarch64-linux-gnu-gcc}
      export CC_aarch64_unknown_linux_musl=${CC_aarch64_unknown_linux_musl:-aarch64-linux-gnu-gcc}
      export AR_aarch64_unknown_linux_musl=${AR_aarch64_unknown_linux_musl:-aarch64-linux-gnu-ar}
      need "$CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_LINKER" "the Debian package gcc-aarch64-linux-gnu"
      need "$AR_aarch64_unknown_linux_musl" "the Debian package binutils-aarch64-linux-gnu"
      ;;
    *) die "unknown target $1 (x86_64-unknown-linux-musl or aarch64-unknown-linux-musl)" ;;
  esac
  grep -qx "$1" <<<"$installed_targets" || die "rustup target $1 missing: rustup target add $1"
}

# A static binary has no program interpreter; `file` says "statically linked" (or
# "static-pie linked" for the position-independent static binaries Rust makes for musl).
check_static() {
  local description
  description=$(file -b "$1")
  case $description in
    *"statically linked"* | *"static-pie linked"*) echo "  $description" ;;
    *) die "$1 is not statically linked: $description" ;;
  esac
}

for target in "${TARGETS[@]}"; do
  configure "$target"
  echo "== cargo build --profile $PROFILE --target $target"
  cargo build --locked --profile "$PROFILE" --target "$target"
  check_static "$TARGET_DIR/$target/$PROFILE/overdue"
done

# Completions and manual pages come from the clap definitions, which are the same on every
# target: generate them once with a binary this machine runs.
host_bin=""
for target in "${TARGETS[@]}"; do
  if "$TARGET_DIR/$target/$PROFILE/overdue" --version >/dev/null 2>&1; then
    host_bin="$TARGET_DIR/$target/$PROFILE/overdue"
    break
  fi
done
[ -n "$host_bin" ] || die "none of the built binaries runs here; build the host's target too"
version=$("$host_bin" --version | awk '{print $2}')
[ -n "$version" ] || die "cannot read the version from $host_bin --version"

export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$DIST"
archives=()
for target in "${TARGETS[@]}"; do
  name="overdue-$version-$target"
  root="$stage/$name"
  mkdir -p "$root/completions" "$root/man"
  install -m 0755 "$TARGET_DIR/$target/$PROFILE/overdue" "$root/overdue"
  install -m 0644 packaging/overdue.service "$root/overdue.service"
  install -m 0644 packaging/overdue.env "$root/overdue.env"
  install -m 0644 README.md LICENSE "$root/"
  "$host_bin" completions bash >"$root/completions/overdue.bash"
  "$host_bin" completions zsh >"$root/completions/_overdue"
  "$host_bin" completions fish >"$root/completions/overdue.fish"
  "$host_bin" man --dir "$root/man" >/dev/null
  chmod 0644 "$root"/completions/* "$root"/man/*
  # Reproducible: fixed order, owner and timestamps.
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
    -C "$stage" -cf - "$name" | gzip -9n >"$DIST/$name.tar.gz"
  archives+=("$name.tar.gz")
  echo "== $DIST/$name.tar.gz ($(du -k "$DIST/$name.tar.gz" | cut -f1) KiB)"
done
(cd "$DIST" && sha256sum "${archives[@]}" >SHA256SUMS && sha256sum -c --quiet SHA256SUMS)
echo "== $DIST/SHA256SUMS"
cat "$DIST/SHA256SUMS"
