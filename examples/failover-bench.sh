#!/usr/bin/env bash
# Failover benchmark (issue 19): two `overdue serve` nodes on one PostgreSQL database (a
# throwaway cluster, .ci/pgcluster). Each round kills the active node with SIGKILL and measures
# the time from the kill to the first ping the other node acknowledges (a client polling both
# every 10 ms, as a retrying proxy would), then starts the killed node again as the standby.
# Also prints the resident memory of an active and a standby node.
#
#   examples/failover-bench.sh            # 10 rounds
#   BENCH_ROUNDS=20 examples/failover-bench.sh
#
# Needs: a Rust toolchain, curl, python3 and Debian's postgresql package; installs nothing.
# It is a measurement, not a test: it exits non-zero only when something fails.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${BENCH_ROUNDS:-10}"

echo "== build (cargo build --release --bins)"
cargo build --release --bins --quiet
OVERDUE="$PWD/target/release/overdue"

. .ci/pgcluster
pg_createdb bench
URL="$PG_ADMIN_URL/bench"
WORK="$(mktemp -d)"
declare -A PID PORT
cleanup() {
  for n in a b; do [[ -n "${PID[$n]:-}" ]] && kill -9 "${PID[$n]}" 2>/dev/null || true; done
  pg_stop
  rm -rf "$WORK"
}
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
# Starts node $1 (a or b) on its port.
start() {
  local n="$1"
  mkdir -p "$WORK/$n"
  env -u OVERDUE_LOG OVERDUE_DATABASE="$URL" "$OVERDUE" --data "$WORK/$n" serve \
    --listen "127.0.0.1:${PORT[$n]}" --api-rate-limit 0 >>"$WORK/$n.out" 2>>"$WORK/$n.log" &
  PID[$n]=$!
}
status_of() { curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:${PORT[$1]}/api/v3/status/" || true; }
wait_status() {
  for _ in $(seq 1 500); do
    [[ "$(status_of "$1")" == "$2" ]] && return 0
    sleep 0.02
  done
  echo "failover-bench: node $1 never answered $2" >&2
  cat "$WORK/$1.log" >&2
  exit 1
}
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }

PORT[a]=$(free_port)
PORT[b]=$(free_port)
start a
wait_status a 200
start b
wait_status b 503
KEY="$(awk '/read-write API key:/ {print $4}' "$WORK/a.out")"
UUID="$(curl -fsS -X POST -H "X-Api-Key: $KEY" -d '{"name": "failover"}' \
  "http://127.0.0.1:${PORT[a]}/api/v3/checks/" | python3 -c 'import json,sys; print(json.load(sys.stdin)["ping_url"].rsplit("/",1)[1])')"
sleep 2
echo "== resident memory: active $(rss_kib "${PID[a]}") KiB, standby $(rss_kib "${PID[b]}") KiB"

active=a
standby=b
times=()
for round in $(seq 1 "$ROUNDS"); do
  kill -9 "${PID[$active]}"
  wait "${PID[$active]}" 2>/dev/null || true
  start_ns=$(date +%s%N)
  until curl -fs -o /dev/null "http://127.0.0.1:${PORT[$standby]}/ping/$UUID"; do sleep 0.01; done
  ms=$(( ($(date +%s%N) - start_ns) / 1000000 ))
  times+=("$ms")
  echo "round $round: node $standby acknowledged a ping $ms ms after node $active was killed"
  start "$active"
  wait_status "$active" 503
  tmp=$active
  active=$standby
  standby=$tmp
done
printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1; s+=$1} END {
  printf "== failover over %d rounds: min %d ms, median %d ms, max %d ms, mean %.0f ms\n",
    NR, a[1], a[int((NR+1)/2)], a[NR], s/NR }'
