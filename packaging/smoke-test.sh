#!/usr/bin/env bash
# Smoke test of one built binary, as a user would first run it: --version, completions and
# the manual page, then `serve` on a fresh data directory, a check created through the
# Management API, one ping, the ping read back through the API, `overdue health`, and a clean
# stop on SIGTERM (after which `overdue health` fails).
#
# Usage: packaging/smoke-test.sh BIN [RUNNER...]
#   packaging/smoke-test.sh target/x86_64-unknown-linux-musl/dist/overdue
#   packaging/smoke-test.sh target/aarch64-unknown-linux-musl/dist/overdue qemu-aarch64-static
#   packaging/smoke-test.sh BIN packaging/unit-sandbox.py     # under the systemd unit's filter
# With SMOKE_SHELL=yes, serve also runs with --allow-shell-channels: a shell channel is added
# (an admin command through the control socket) and a failure ping must run its command.
# Needs curl and python3 (to read the JSON answers).
set -euo pipefail

[ $# -ge 1 ] || { echo "usage: $0 BIN [RUNNER...]" >&2; exit 2; }
bin=$1
shift
runner=("$@")
# Generous: argon2 hashes the first keys, which is slow under emulation.
START_LIMIT=${START_LIMIT:-120}
SMOKE_SHELL=${SMOKE_SHELL:-no}
serve_flags=()
[ "$SMOKE_SHELL" = yes ] && serve_flags+=(--allow-shell-channels)

fail() { echo "smoke-test: $*" >&2; exit 1; }
overdue() { env -i PATH="$PATH" OVERDUE_LOG=info "${runner[@]}" "$bin" "$@"; }
json() { python3 -c "import json, sys; d = json.load(sys.stdin); print($1)"; }

tmp=$(mktemp -d)
pid=""
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

version=$(overdue --version)
[[ $version =~ ^overdue\ [0-9]+\.[0-9]+\.[0-9]+ ]] || fail "unexpected --version: $version"
echo "smoke-test: $version (${runner[*]:-native})"
[[ $(overdue completions bash) == *"complete -F _overdue"* ]] || fail "no bash completion"
[[ $(overdue man) == *".TH overdue 1"* ]] || fail "no manual page"

# Not through the function: `$!` must be the service itself (env and qemu-user exec in place),
# not a subshell that SIGTERM would stop instead.
env -i PATH="$PATH" OVERDUE_LOG=info "${runner[@]}" "$bin" --data "$tmp/data" serve \
  --listen 127.0.0.1:0 "${serve_flags[@]}" >"$tmp/stdout" 2>"$tmp/stderr" &
pid=$!
port=""
for _ in $(seq $((START_LIMIT * 10))); do
  port=$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9]*\).*|\1|p' "$tmp/stderr" | head -1)
  [ -n "$port" ] && break
  kill -0 "$pid" 2>/dev/null || fail "serve exited early: $(cat "$tmp/stderr")"
  sleep 0.1
done
[ -n "$port" ] || fail "serve did not start within ${START_LIMIT}s: $(cat "$tmp/stderr")"
key=$(sed -n 's/^ *read-write API key: *//p' "$tmp/stdout")
[ -n "$key" ] || fail "no read-write key on first start: $(cat "$tmp/stdout")"
base="http://127.0.0.1:$port"

check=$(curl -fsS -X POST -H "X-Api-Key: $key" "$base/api/v3/checks/" \
  -d '{"name": "smoke", "timeout": 3600, "grace": 60}')
uuid=$(json 'd["uuid"]' <<<"$check")
[ "$(curl -fsS "$base/ping/$uuid" -d 'hello from the smoke test')" = OK ] || fail "ping not OK"

pings=$(curl -fsS -H "X-Api-Key: $key" "$base/api/v3/checks/$uuid/pings/")
got=$(json '[(p["n"], p["type"]) for p in d["pings"]]' <<<"$pings")
[ "$got" = "[(1, 'success')]" ] || fail "expected one success ping, got $got: $pings"
status=$(curl -fsS -H "X-Api-Key: $key" "$base/api/v3/checks/$uuid" | json 'd["status"], d["n_pings"]')
[ "$status" = "up 1" ] || fail "expected the check up with one ping, got $status"
overdue health --listen "127.0.0.1:$port" >/dev/null || fail "overdue health failed while serving"

if [ "$SMOKE_SHELL" = yes ]; then
  overdue --data "$tmp/data" channel add --kind shell --name smoke-shell \
    --cmd-down "echo \"\$NAME \$STATUS\" > '$tmp/alert'" >/dev/null || fail "channel add failed"
  [ "$(curl -fsS "$base/ping/$uuid/fail")" = OK ] || fail "fail ping not OK"
  for _ in $(seq 300); do
    [ -s "$tmp/alert" ] && break
    kill -0 "$pid" 2>/dev/null || fail "serve died running the shell channel: $(cat "$tmp/stderr")"
    sleep 0.1
  done
  [ "$(cat "$tmp/alert" 2>/dev/null)" = "smoke down" ] ||
    fail "the shell channel did not run: $(cat "$tmp/alert" 2>/dev/null) $(cat "$tmp/stderr")"
fi

kill -TERM "$pid"
code=0
wait "$pid" || code=$?
pid=""
[ "$code" = 0 ] || fail "serve exited with $code after SIGTERM: $(cat "$tmp/stderr")"
if overdue health --listen "127.0.0.1:$port" 2>/dev/null; then fail "overdue health passed after the stop"; fi
shell_note=""
[ "$SMOKE_SHELL" = yes ] && shell_note=", a shell channel ran"
echo "smoke-test: serve, create a check, ping, read it back, health$shell_note, stop: OK"
