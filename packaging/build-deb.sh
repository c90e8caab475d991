#!/usr/bin/env bash
# Builds a Debian package from a release archive made by build-release.sh, so the package holds
# exactly what the archive holds:
#   /usr/bin/overdue, /lib/systemd/system/overdue.service, /etc/overdue/overdue.env (a
#   conffile), the manual pages, bash/zsh/fish completions, /usr/share/doc/overdue.
# The unit uses DynamicUser, so no user is created. Installing enables and starts nothing; an
# upgrade restarts the service only if it runs; removal stops and disables it and keeps the data
# in /var/lib/overdue (even on purge: it is the monitoring history and the API keys).
#
# Usage: packaging/build-deb.sh dist/overdue-<version>-<target>.tar.gz [OUT_DIR]
# Needs dpkg-deb. Environment: DEB_MAINTAINER, SOURCE_DATE_EPOCH. The maintainer scripts use
# deb-systemd-invoke and deb-systemd-helper (init-system-helpers, essential on Debian).
set -euo pipefail

die() { echo "build-deb: $*" >&2; exit 1; }
[ $# -ge 1 ] || { echo "usage: $0 ARCHIVE [OUT_DIR]" >&2; exit 2; }
archive=$1
out=${2:-$(dirname "$archive")}
command -v dpkg-deb >/dev/null || die "dpkg-deb not found; install the Debian package dpkg"

name=$(basename "$archive" .tar.gz)
[[ $name =~ ^overdue-([0-9][^-]*)-([a-z0-9_]+)-unknown-linux-musl$ ]] ||
  die "$archive is not named overdue-<version>-<target>.tar.gz"
version=${BASH_REMATCH[1]}
case ${BASH_REMATCH[2]} in
  x86_64) arch=amd64 ;;
  aarch64) arch=arm64 ;;
  *) die "no Debian architecture for ${BASH_REMATCH[2]}" ;;
esac
maintainer=${DEB_MAINTAINER:-Overdue maintainers <maintainers@overdue.invalid>}
epoch=${SOURCE_DATE_EPOCH:-$(date +%s)}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar -xzf "$archive" -C "$work"
src="$work/$name"
[ -x "$src/overdue" ] || die "$archive holds no $name/overdue"
pkg="$work/pkg"

install -D -m 0755 "$src/overdue" "$pkg/usr/bin/overdue"
install -D -m 0644 "$src/overdue.service" "$pkg/lib/systemd/system/overdue.service"
# It may come to hold secrets (SMTP passwords); systemd reads it as root.
install -D -m 0600 "$src/overdue.env" "$pkg/etc/overdue/overdue.env"
install -d "$pkg/usr/share/man/man1"
for page in "$src"/man/*.1; do
  gzip -9n <"$page" >"$pkg/usr/share/man/man1/$(basename "$page").gz"
done
install -D -m 0644 "$src/completions/overdue.bash" \
  "$pkg/usr/share/bash-completion/completions/overdue"
install -D -m 0644 "$src/completions/_overdue" "$pkg/usr/share/zsh/vendor-completions/_overdue"
install -D -m 0644 "$src/completions/overdue.fish" \
  "$pkg/usr/share/fish/vendor_completions.d/overdue.fish"

doc="$pkg/usr/share/doc/overdue"
install -d "$doc"
gzip -9n <"$src/README.md" >"$doc/README.md.gz"
{
  echo "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"
  echo "Upstream-Name: overdue"
  echo
  echo "Files: *"
  echo "Copyright: the Overdue authors"
  echo "License: MIT"
  sed 's/^$/./; s/^/ /' "$src/LICENSE"
} >"$doc/copyright"
{
  echo "overdue ($version-1) unstable; urgency=medium"
  echo
  echo "  * Overdue $version, from $name.tar.gz."
  echo
  echo " -- $maintainer  $(date -R -u -d "@$epoch")"
} | gzip -9n >"$doc/changelog.Debian.gz"
chmod 0644 "$doc"/*

# Deliberate, so not warnings: the binary is static (a static-PIE looks like a library to
# lintian), the package is not uploaded to Debian, and the env file may come to hold secrets.
install -d "$pkg/usr/share/lintian/overrides"
cat >"$pkg/usr/share/lintian/overrides/overdue" <<'EOF'
overdue: statically-linked-binary [usr/bin/overdue]
overdue: shared-library-lacks-prerequisites [usr/bin/overdue]
overdue: initial-upload-closes-no-bugs [usr/share/doc/overdue/changelog.Debian.gz:1]
overdue: non-standard-file-perm 0600 != 0644 [etc/overdue/overdue.env]
EOF
chmod 0644 "$pkg/usr/share/lintian/overrides/overdue"

install -d "$pkg/DEBIAN"
cat >"$pkg/DEBIAN/control" <<EOF
Package: overdue
Version: $version-1
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $(du -sk --exclude=DEBIAN "$pkg" | cut -f1)
Section: admin
Priority: optional
Description: self-hosted dead-man's-switch monitor
 Cron jobs, backups and daemons ping Overdue; when a ping does not arrive in
 time, or a job reports failure, it marks the check down and alerts people
 through its integrations. It speaks the Healthchecks.io Management API and
 Pinging API, so existing clients and scripts work unchanged. One static
 binary with one embedded database file in /var/lib/overdue.
EOF
echo /etc/overdue/overdue.env >"$pkg/DEBIAN/conffiles"

cat >"$pkg/DEBIAN/postinst" <<'EOF'
#!/bin/sh
set -e
if [ "$1" = configure ] && [ -d /run/systemd/system ]; then
    systemctl daemon-reload || true
    if [ -n "$2" ]; then
        # An upgrade: a running service moves to the new binary; a stopped one stays stopped.
        deb-systemd-invoke try-restart overdue.service || true
    else
        echo "overdue: installed but not started; settings in /etc/overdue/overdue.env."
        echo "overdue: start it with: systemctl enable --now overdue"
    fi
fi
exit 0
EOF
cat >"$pkg/DEBIAN/prerm" <<'EOF'
#!/bin/sh
set -e
if [ "$1" = remove ]; then
    if [ -d /run/systemd/system ]; then
        deb-systemd-invoke stop overdue.service || true
    fi
    # Drops the enablement links while the unit file (which names them) still exists.
    deb-systemd-helper disable overdue.service >/dev/null 2>&1 || true
fi
exit 0
EOF
cat >"$pkg/DEBIAN/postrm" <<'EOF'
#!/bin/sh
set -e
if [ "$1" = remove ] || [ "$1" = purge ]; then
    if [ -d /run/systemd/system ]; then
        systemctl daemon-reload || true
    fi
    if [ -e /var/lib/overdue ]; then
        echo "overdue: the data in /var/lib/overdue is kept; delete it yourself if unwanted."
    fi
fi
exit 0
EOF
chmod 0755 "$pkg/DEBIAN/postinst" "$pkg/DEBIAN/prerm" "$pkg/DEBIAN/postrm"

mkdir -p "$out"
deb="$out/overdue_${version}-1_$arch.deb"
find "$pkg" -exec touch -h -d "@$epoch" {} +
dpkg-deb --root-owner-group -Zxz --build "$pkg" "$deb" >/dev/null
echo "$deb"
