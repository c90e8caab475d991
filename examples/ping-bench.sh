#!/usr/bin/env bash
# Ping throughput benchmark (issue 3): the real ping path of `overdue serve` against a
# do-nothing warp server (examples/null_server.rs), measured side by side with the same wrk
# command, pings spread over 1,000 checks.
#
#   examples/ping-bench.sh
#
# Needs: a Rust toolchain, wrk (Debian package `wrk`) and curl; installs nothing. Builds
# `cargo build --release --bins --examples`, then for each server: starts it on 127.0.0.1 (port picked
# by the kernel), runs a short warm-up and then `wrk -t2 -c64 -d15s --latency` with
# examples/ping-bench.lua spreading requests round-robin over a list of paths, and stops it.
# Prints both requests/sec, the ratio real/null and both p99 latencies.
#
# It is a measurement, not a test: it exits non-zero only when something fails (a server does
# not start, a check cannot be created, wrk reports socket errors or non-2xx answers), never
# because a target is missed.
#
# Environment (all optional):
#   BENCH_DURATION   wrk duration of each measured run (default 15s)
#   BENCH_WARMUP     wrk duration of the warm-up before each run (default 2s; 0 skips it)
#   BENCH_THREADS    wrk threads (default 2)
#   BENCH_CONNS      wrk connections (default 64)
#   BENCH_CHECKS     checks to spread pings over (default 1000)
#   BENCH_DATA_DIR   parent of the temporary data directory (default: $TMPDIR or /tmp);
#                    the fsync cost of this file system is part of what is measured
#   BENCH_DATABASE   a PostgreSQL URL of an empty database: overdue is then measured a second
#                    time, on PostgreSQL (`serve --database`), right after the data file
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION="${BENCH_DURATION:-15s}"
WARMUP="${BENCH_WARMUP:-2s}"
THREADS="${BENCH_THREADS:-2}"
CONNS="${BENCH_CONNS:-64}"
CHECKS="${BENCH_CHECKS:-1000}"
LUA="$PWD/examples/ping-bench.lua"

for tool in wrk curl cargo; do
  if ! command -v "$tool" >/dev/null; then
    echo "ping-bench: $tool is required (wrk: apt-get install wrk)" >&2
    exit 2
  fi
done

echo "== build (cargo build --release --bins --examples)"
cargo build --release --bins --examples --quiet
OVERDUE="$PWD/target/release/overdue"
NULL_SERVER="$PWD/target/release/examples/null_server"

WORK="$(mktemp -d "${BENCH_DATA_DIR:-${TMPDIR:-/tmp}}/overdue-bench.XXXXXX")"
SERVER_PID=""
stop_server() {
  if [[ -n "$SERVER_PID" ]]; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
  fi
}
cleanup() {
  stop_server
  rm -rf "$WORK"
}
trap cleanup EXIT

fail() {
  echo "ping-bench: $*" >&2
  exit 1
}

# Waits until the server whose stderr is in $1 logs its address; prints host:port.
wait_listening() {
  local log="$1" addr=""
  for _ in $(seq 1 200); do
    addr="$(grep -oE 'listening on http://[0-9.]+:[0-9]+' "$log" | head -n1 | sed 's|.*http://||' || true)"
    if [[ -n "$addr" ]]; then
      echo "$addr"
      return 0
    fi
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
      cat "$log" >&2
      return 1
    fi
    sleep 0.05
  done
  cat "$log" >&2
  return 1
}

# wrk's latency figure (e.g. 812.00us, 3.21ms, 1.02s) in milliseconds.
to_ms() {
  awk -v v="$1" 'BEGIN {
    n = v + 0
    if (v ~ /us$/) n = n / 1000
    else if (v ~ /ms$/) n = n
    else if (v ~ /m$/) n = n * 60000
    else if (v ~ /s$/) n = n * 1000
    printf "%.2f", n
  }'
}

# Runs wrk against $1 (base URL) with the paths in $2; output in $3.
run_wrk() {
  local base="$1" paths="$2" out="$3"
  if [[ "$WARMUP" != "0" ]]; then
    PING_BENCH_PATHS="$paths" wrk -t"$THREADS" -c"$CONNS" -d"$WARMUP" -s "$LUA" "$base" >/dev/null
  fi
  echo "-- wrk -t$THREADS -c$CONNS -d$DURATION --latency -s examples/ping-bench.lua $base"
  PING_BENCH_PATHS="$paths" wrk -t"$THREADS" -c"$CONNS" -d"$DURATION" --latency -s "$LUA" "$base" | tee "$out"
}

rps_of() { awk '/^Requests\/sec:/ {print $2}' "$1"; }
p99_of() { to_ms "$(awk '$1 == "99%" {print $2}' "$1")"; }
# Socket errors and non-2xx answers reported by wrk; empty when there were none.
errors_of() {
  grep -E '^  (Socket errors|Non-2xx or 3xx responses):' "$1" || true
}

# ---------------------------------------------------------------------------------------------
echo "== null server (examples/null_server.rs)"
"$NULL_SERVER" 127.0.0.1:0 2>"$WORK/null.log" &
SERVER_PID=$!
NULL_ADDR="$(wait_listening "$WORK/null.log")" || fail "the null server did not start"
# Same shape of paths as the real run, so request sizes match.
for _ in $(seq 1 "$CHECKS"); do
  echo "/ping/$(cat /proc/sys/kernel/random/uuid)"
done >"$WORK/null-paths"
run_wrk "http://$NULL_ADDR" "$WORK/null-paths" "$WORK/null.wrk"
stop_server

# ---------------------------------------------------------------------------------------------
# Measures `overdue serve` with extra arguments $2... (the storage); results in $WORK/$1.wrk.
bench_overdue() {
  local name="$1"
  shift
  echo "== overdue serve (release binary) $*"
  mkdir -p "$WORK/data-$name"
  env -u OVERDUE_LOG -u OVERDUE_PING_RATE_LIMIT -u OVERDUE_PING_LOG -u OVERDUE_TRUST_PROXY \
    -u OVERDUE_DATABASE \
    "$OVERDUE" --data "$WORK/data-$name" "$@" serve --listen 127.0.0.1:0 --api-rate-limit 0 \
    >"$WORK/serve-$name.out" 2>"$WORK/serve-$name.log" &
  SERVER_PID=$!
  REAL_ADDR="$(wait_listening "$WORK/serve-$name.log")" || fail "overdue serve did not start"
  KEY="$(awk '/read-write API key:/ {print $4}' "$WORK/serve-$name.out")"
  [[ "$KEY" == hcw_* ]] || fail "no read-write key in serve's stdout: $(cat "$WORK/serve-$name.out")"

  echo "-- creating $CHECKS checks"
  : >"$WORK/$name-paths"
  for i in $(seq 1 "$CHECKS"); do
    answer="$(curl -fsS -X POST -H "X-Api-Key: $KEY" -H 'Content-Type: application/json' \
      -d "{\"name\": \"bench-$i\"}" "http://$REAL_ADDR/api/v3/checks/")" ||
      fail "creating check $i failed"
    uuid="$(printf '%s' "$answer" | grep -oE '"uuid": ?"[0-9a-f-]{36}"' | grep -oE '[0-9a-f-]{36}')" ||
      fail "no uuid in: $answer"
    echo "/ping/$uuid" >>"$WORK/$name-paths"
  done
  # One ping answered OK before measuring, so a broken ping path fails loudly here.
  first="$(head -n1 "$WORK/$name-paths")"
  [[ "$(curl -fsS "http://$REAL_ADDR$first")" == "OK" ]] || fail "a ping was not answered OK"
  run_wrk "http://$REAL_ADDR" "$WORK/$name-paths" "$WORK/$name.wrk"
  stop_server
}

bench_overdue real
RUNS=(null real)
if [[ -n "${BENCH_DATABASE:-}" ]]; then
  bench_overdue pg --database "$BENCH_DATABASE"
  RUNS+=(pg)
fi

# ---------------------------------------------------------------------------------------------
NULL_RPS="$(rps_of "$WORK/null.wrk")"
REAL_RPS="$(rps_of "$WORK/real.wrk")"
NULL_P99="$(p99_of "$WORK/null.wrk")"
REAL_P99="$(p99_of "$WORK/real.wrk")"
[[ -n "$NULL_RPS" && -n "$REAL_RPS" ]] || fail "could not read wrk's output"
RATIO="$(awk -v r="$REAL_RPS" -v n="$NULL_RPS" 'BEGIN { printf "%.3f", r / n }')"

echo
echo "== result ($(nproc) cores, wrk -t$THREADS -c$CONNS -d$DURATION, $CHECKS checks)"
printf '%-8s %12s %10s\n' "server" "req/s" "p99 (ms)"
printf '%-8s %12s %10s\n' "null" "$NULL_RPS" "$NULL_P99"
printf '%-8s %12s %10s\n' "overdue" "$REAL_RPS" "$REAL_P99"
if [[ -n "${BENCH_DATABASE:-}" ]]; then
  printf '%-8s %12s %10s\n' "postgres" "$(rps_of "$WORK/pg.wrk")" "$(p99_of "$WORK/pg.wrk")"
fi
echo "ratio overdue/null: $RATIO (target >= 0.6); overdue p99: $REAL_P99 ms (target < 10 ms)"

status=0
for run in "${RUNS[@]}"; do
  errs="$(errors_of "$WORK/$run.wrk")"
  if [[ -n "$errs" ]]; then
    echo "ping-bench: wrk reported errors against the $run server:" >&2
    echo "$errs" >&2
    status=1
  fi
done
exit "$status"
