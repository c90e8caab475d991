#!/usr/bin/env bash
# Check page benchmark (issue 16, "Measured"): server time of the dashboard's check page for a
# check with a full ping log (1,000 pings, every one with a body, so the page reads the 50
# bodies of its rows: the worst case), and its size with and without gzip.
#
#   examples/check-page-bench.sh
#
# Needs: a Rust toolchain and curl; installs nothing. Builds `cargo build --release --bins`,
# starts `overdue serve` on 127.0.0.1 (port picked by the kernel) over a temporary data
# directory, creates one cron check, sends it BENCH_PINGS pings with a body, signs in with the
# first-start read-write key, warms up, then GETs the check page BENCH_REQUESTS times one
# after another and prints p50/p95/max of the server time (curl's time_starttransfer minus
# time_pretransfer: from the request sent to the first byte back) and the page's bytes.
#
# A measurement, not a test: it exits non-zero only when something fails.
#
# Environment (all optional):
#   BENCH_PINGS      pings logged before measuring (default 1000, the default ping log)
#   BENCH_REQUESTS   page loads measured (default 200)
#   BENCH_DATA_DIR   parent of the temporary data directory (default: $TMPDIR or /tmp)
set -euo pipefail
cd "$(dirname "$0")/.."

PINGS="${BENCH_PINGS:-1000}"
REQUESTS="${BENCH_REQUESTS:-200}"

for tool in curl cargo; do
  command -v "$tool" >/dev/null || { echo "check-page-bench: $tool is required" >&2; exit 2; }
done

echo "== build (cargo build --release --bins)"
cargo build --release --bins --quiet
OVERDUE="$PWD/target/release/overdue"

WORK="$(mktemp -d "${BENCH_DATA_DIR:-${TMPDIR:-/tmp}}/overdue-page-bench.XXXXXX")"
SERVER_PID=""
cleanup() {
  if [[ -n "$SERVER_PID" ]]; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() {
  echo "check-page-bench: $*" >&2
  exit 1
}

mkdir -p "$WORK/data"
env -u OVERDUE_LOG -u OVERDUE_PING_RATE_LIMIT -u OVERDUE_PING_LOG -u OVERDUE_TRUST_PROXY \
  "$OVERDUE" --data "$WORK/data" serve --listen 127.0.0.1:0 --api-rate-limit 0 \
  --ping-rate-limit 0 >"$WORK/serve.out" 2>"$WORK/serve.log" &
SERVER_PID=$!
ADDR=""
for _ in $(seq 1 200); do
  ADDR="$(grep -oE 'listening on http://[0-9.]+:[0-9]+' "$WORK/serve.log" | head -n1 | sed 's|.*http://||' || true)"
  [[ -n "$ADDR" ]] && break
  kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/serve.log" >&2; fail "serve did not start"; }
  sleep 0.05
done
[[ -n "$ADDR" ]] || fail "serve did not start"
BASE="http://$ADDR"
KEY="$(awk '/read-write API key:/ {print $4}' "$WORK/serve.out")"
[[ "$KEY" == hcw_* ]] || fail "no read-write key in serve's stdout"

UUID="$(curl -fsS -X POST -H "X-Api-Key: $KEY" -H 'Content-Type: application/json' \
  -d '{"name": "nightly", "schedule": "30 2 * * *", "tz": "Europe/Riga"}' \
  "$BASE/api/v3/checks/" | grep -oE '"uuid": ?"[0-9a-f-]{36}"' | grep -oE '[0-9a-f-]{36}')"
[[ -n "$UUID" ]] || fail "could not create the check"

echo "-- $PINGS pings with a body"
for i in $(seq 1 "$PINGS"); do
  if (( i % 2 )); then echo "url = \"$BASE/ping/$UUID/start\""; else echo "url = \"$BASE/ping/$UUID\""; fi
  echo "output = /dev/null"
done >"$WORK/pings.curl"
curl -fsS -K "$WORK/pings.curl" --data-binary 'backup of 12 databases: 3.2 GB in 41 s, all ok' \
  || fail "a ping failed"

curl -fsS -o /dev/null -c "$WORK/jar" --data-urlencode "key=$KEY" -H "Origin: $BASE" \
  "$BASE/signin/" || fail "sign-in failed"
PAGE="$BASE/checks/$UUID/"
for _ in $(seq 1 20); do curl -fsS -o /dev/null -b "$WORK/jar" "$PAGE"; done

echo "-- $REQUESTS GETs of the check page"
for _ in $(seq 1 "$REQUESTS"); do
  curl -fsS -o /dev/null -b "$WORK/jar" -w '%{time_pretransfer} %{time_starttransfer}\n' "$PAGE"
done | awk '{ printf "%.3f\n", ($2 - $1) * 1000 }' | sort -n >"$WORK/times"
p() { awk -v q="$1" '{ a[NR] = $1 } END { i = int(NR * q + 0.999); if (i < 1) i = 1; print a[i] }' "$WORK/times"; }
PLAIN="$(curl -fsS -b "$WORK/jar" "$PAGE" | wc -c)"
GZIP="$(curl -fsS -b "$WORK/jar" -H 'Accept-Encoding: gzip' "$PAGE" | wc -c)"
ROWS="$(curl -fsS -b "$WORK/jar" "$PAGE" | grep -c 'data-label="#"' || true)"
echo "check page, $PINGS pings logged, $ROWS rows shown:"
echo "  server time p50 $(p 0.5) ms, p95 $(p 0.95) ms, max $(p 1.0) ms"
echo "  HTML $PLAIN bytes, $GZIP bytes gzip"
