#!/usr/bin/env bash
# A/B of the ping path of two `overdue` binaries (e.g. a release build of the last landed
# commit and one of the change), alternating A, B, A, B, ... so that whatever else the machine
# does falls on both alike. Each round starts the binary on a fresh data directory, creates the
# checks, warms up, runs `wrk -t2 -c64 --latency` with examples/ping-bench.lua spread over the
# checks, and stops it. Besides req/s and p99 it prints the server's CPU time (user + system,
# from /proc) per request during the measured run: on a machine shared with wrk that figure
# moves less from run to run than req/s does.
#
#   examples/ping-ab.sh OLD-BINARY NEW-BINARY [ROUNDS]
#
# Needs wrk and curl; builds nothing. Environment: BENCH_DURATION (10s), BENCH_WARMUP (2s),
# BENCH_CHECKS (1000), BENCH_DATA_DIR (parent of the data directories; $TMPDIR or /tmp).
# A measurement, not a test: it fails only when a server does not start or wrk sees errors.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -ge 2 ]] || { echo "usage: $0 OLD-BINARY NEW-BINARY [ROUNDS]" >&2; exit 2; }
A="$(realpath "$1")"
B="$(realpath "$2")"
ROUNDS="${3:-2}"
DURATION="${BENCH_DURATION:-10s}"
WARMUP="${BENCH_WARMUP:-2s}"
CHECKS="${BENCH_CHECKS:-1000}"
LUA="$PWD/examples/ping-bench.lua"
WORK="$(mktemp -d "${BENCH_DATA_DIR:-${TMPDIR:-/tmp}}/overdue-ab.XXXXXX")"
PID=""
cleanup() {
  [[ -n "$PID" ]] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT

# One round of binary $1 labelled $2; prints "label req/s p99".
round() {
  local bin="$1" label="$2" dir="$WORK/$2-$RANDOM" addr="" key=""
  mkdir -p "$dir"
  env -u OVERDUE_LOG "$bin" --data "$dir/data" serve --listen 127.0.0.1:0 --api-rate-limit 0 \
    >"$dir/out" 2>"$dir/log" &
  PID=$!
  for _ in $(seq 1 200); do
    addr="$(grep -oE 'listening on http://[0-9.]+:[0-9]+' "$dir/log" | sed 's|.*http://||' || true)"
    [[ -n "$addr" ]] && break
    sleep 0.05
  done
  [[ -n "$addr" ]] || { cat "$dir/log" >&2; exit 1; }
  key="$(awk '/read-write API key:/ {print $4}' "$dir/out")"
  for i in $(seq 1 "$CHECKS"); do
    curl -fsS -X POST -H "X-Api-Key: $key" -d "{\"name\": \"b$i\"}" \
      "http://$addr/api/v3/checks/" | grep -oE '"ping_url": ?"[^"]+"' | grep -oE '/ping/[0-9a-f-]{36}'
  done >"$dir/paths"
  if [[ "$WARMUP" != "0" ]]; then
    PING_BENCH_PATHS="$dir/paths" wrk -t2 -c64 -d"$WARMUP" -s "$LUA" "http://$addr" >/dev/null
  fi
  local ticks_before ticks_after
  ticks_before="$(cpu_ticks "$PID")"
  PING_BENCH_PATHS="$dir/paths" wrk -t2 -c64 -d"$DURATION" --latency -s "$LUA" \
    "http://$addr" >"$dir/wrk"
  ticks_after="$(cpu_ticks "$PID")"
  kill "$PID"; wait "$PID" 2>/dev/null || true; PID=""
  if grep -qE '^  (Socket errors|Non-2xx)' "$dir/wrk"; then
    cat "$dir/wrk" >&2
    exit 1
  fi
  local requests
  requests="$(awk '/requests in/ {print $1}' "$dir/wrk")"
  printf '%-4s %10s %10s %12s\n' "$label" "$(awk '/^Requests\/sec:/ {print $2}' "$dir/wrk")" \
    "$(awk '$1 == "99%" {print $2}' "$dir/wrk")" \
    "$(awk -v t="$((ticks_after - ticks_before))" -v r="$requests" -v hz="$(getconf CLK_TCK)" \
      'BEGIN { printf "%.1f", t / hz * 1e6 / r }')"
}

# User plus system CPU time of process $1 so far, in clock ticks.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

echo "A = $A"
echo "B = $B"
echo "$(nproc) cores, wrk -t2 -c64 -d$DURATION, $CHECKS checks, $ROUNDS rounds"
printf '%-4s %10s %10s %12s\n' "" "req/s" "p99" "server CPU µs/request"
for _ in $(seq 1 "$ROUNDS"); do
  round "$A" A
  round "$B" B
done
