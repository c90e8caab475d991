#!/usr/bin/env bash
# Builds the container image from packaging/Containerfile with podman and saves it:
#   dist/overdue-image-<version>-<arch>.tar   (docker-archive: `docker load -i` or `podman load -i`)
# The image is FROM scratch, so the build pulls nothing and runs nothing; HEALTHCHECK needs the
# docker image format (OCI images have no health check).
#
# Usage: packaging/build-image.sh [BIN]
#   BIN: the static binary (default: target/x86_64-unknown-linux-musl/dist/overdue, as
#   packaging/build-release.sh leaves it); an aarch64 binary makes an arm64 image.
# Environment: DIST (default dist), CARGO_TARGET_DIR as cargo reads it, IMAGE (the tag, default
# localhost/overdue:<version>), CA_BUNDLE (default /etc/ssl/certs/ca-certificates.crt, Debian's
# ca-certificates), SOURCE_DATE_EPOCH (timestamps in the image; default: the last commit's time).
# Needs podman and file.
set -euo pipefail
cd "$(dirname "$0")/.."

DIST=${DIST:-dist}
TARGET_DIR=${CARGO_TARGET_DIR:-target}
bin=${1:-$TARGET_DIR/x86_64-unknown-linux-musl/dist/overdue}
CA_BUNDLE=${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}

die() { echo "build-image: $*" >&2; exit 1; }
command -v podman >/dev/null || die "podman not found; install the Debian package podman"
[ -x "$bin" ] || die "$bin not found; run packaging/build-release.sh first"
[ -s "$CA_BUNDLE" ] || die "$CA_BUNDLE not found; install the Debian package ca-certificates"

description=$(file -b "$bin")
case $description in
  *"statically linked"* | *"static-pie linked"*) ;;
  *) die "$bin is not statically linked: $description" ;;
esac
case $description in
  *x86-64*) arch=amd64 ;;
  *aarch64*) arch=arm64 ;;
  *) die "unknown architecture: $description" ;;
esac
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
[ -n "$version" ] || die "cannot read the version from Cargo.toml"
IMAGE=${IMAGE:-localhost/overdue:$version}
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}

context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
install -m 0755 "$bin" "$context/overdue"
install -m 0644 "$CA_BUNDLE" "$context/ca-certificates.crt"
printf 'root:x:0:0:root:/:/sbin/nologin\noverdue:x:65532:65532:overdue:/data:/sbin/nologin\n' \
  >"$context/passwd"
printf 'root:x:0:\noverdue:x:65532:\n' >"$context/group"
mkdir -p "$context/volume" && mkdir -m 0700 "$context/volume/data"

echo "== podman build $IMAGE ($arch)"
podman build --quiet --format docker --arch "$arch" --timestamp "$SOURCE_DATE_EPOCH" \
  -f packaging/Containerfile -t "$IMAGE" "$context"
mkdir -p "$DIST"
archive="$DIST/overdue-image-$version-$arch.tar"
rm -f "$archive"
podman save --quiet --format docker-archive -o "$archive" "$IMAGE"
echo "== $archive ($(du -k "$archive" | cut -f1) KiB)"
