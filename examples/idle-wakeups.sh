#!/bin/bash
# Idle wake-ups (docs/benchmarks.md, "Alerting rules"): serves a fresh data directory with
# 1,000 up checks (made with `overdue check add`, each pinged once; with RULES=1 each also has
# a quiet window and a parent), waits 5 s, then counts the service's context switches and CPU
# time over 30 s of idle with `perf stat`.
#
#   examples/idle-wakeups.sh target/release/overdue 0 24610    # BIN RULES PORT
set -u
bin=$1; rules=$2; port=$3
dir=$(mktemp -d "${TMPDIR:-/tmp}/idle.XXXX")
$bin --data $dir serve --listen 127.0.0.1:$port > $dir/log 2>&1 &
pid=$!
for _ in $(seq 50); do grep -q "read-write API key" "$dir/log" && break; sleep 0.2; done
base=http://127.0.0.1:$port
parent=$($bin --data $dir check add --name parent --timeout 3600 --grace 300 --json | python3 -c 'import json,sys;print(json.load(sys.stdin)["uuid"])')
curl -s -o /dev/null $base/ping/$parent
made=0
for i in $(seq 999); do
  if [ "$rules" = 1 ]; then
    u=$($bin --data $dir check add --name c$i --timeout 3600 --grace 300 --quiet-schedule "0 3 1 1 *" --parents $parent --json 2>/dev/null | python3 -c 'import json,sys;print(json.load(sys.stdin)["uuid"])' 2>/dev/null)
  else
    u=$($bin --data $dir check add --name c$i --timeout 3600 --grace 300 --json 2>/dev/null | python3 -c 'import json,sys;print(json.load(sys.stdin)["uuid"])' 2>/dev/null)
  fi
  if [ -n "$u" ]; then made=$((made+1)); curl -s -o /dev/null "$base/ping/$u"; fi
done
echo "checks made: $((made+1))"
sleep 5
perf stat -e context-switches,task-clock -p $pid -- sleep 30 2>&1 | grep -E "context-switches|task-clock"
kill $pid; wait $pid 2>/dev/null
rm -rf $dir
