#!/usr/bin/env bash
# Single-fingerprint requests against `simhashdb serve` with 64 connections: alone, then while
# a daily batch is inserted (CLI insert, another process) and the store compacted.
#
#   scripts/serve_under_load.sh STORE DAILY.tsv [SECONDS]
#
# WRITER_NICE=19 runs the insert and the compaction at the lowest CPU priority (as a cron job
# beside a server on the same cores should run). RATE=N sends N requests/s in all (oha -q,
# latencies measured from when each request was due: --latency-correction) instead of as
# many as the 64 connections get answered.
# Needs oha (cargo install oha) and a release build (cargo build --release). Prints the
# server's resident memory when ready, oha's summary for each phase, and how long the insert
# and the compaction took. Stops the server on exit, also on failure.
set -euo pipefail
store=$1
daily=$2
seconds=${3:-10}
bin=$(dirname "$0")/../target/release/simhashdb
port=$((20000 + RANDOM % 20000))
url="http://127.0.0.1:$port/v1/query\\?fingerprint=[0-9a-f]{16}"
rate=()
if [ -n "${RATE:-}" ]; then rate=(-q "$RATE" --latency-correction); fi
log=$(mktemp)
"$bin" serve "$store" --listen "127.0.0.1:$port" >"$log" 2>&1 &
server=$!
trap 'kill -TERM $server 2>/dev/null; wait $server 2>/dev/null; rm -f "$log"' EXIT
started=$(date +%s.%N)
until curl -sf "http://127.0.0.1:$port/readyz" >/dev/null; do
    kill -0 $server 2>/dev/null || { cat "$log"; exit 1; }
    sleep 0.5
done
echo "ready after $(echo "$(date +%s.%N) - $started" | bc) s; server RSS $(($(awk '/VmRSS/ {print $2}' /proc/$server/status) / 1024)) MiB"

curl -sf "http://127.0.0.1:$port/v1/query?fingerprint=0123456789abcdef" >/dev/null \
    || { echo "a single query failed" >&2; exit 1; }
# The previous run's writes (a deleted store, a compaction's old files) may still be reaching
# the disk: let them finish, so "alone" measures the server alone.
sync
sleep 5
echo "== alone, ${seconds} s"
oha -z "${seconds}s" -c 64 "${rate[@]}" --no-tui --rand-regex-url "$url" | sed -n '/Summary/,/Latency distribution/p;/Status code/,$p'

echo "== during: insert $daily, then compact"
(
    t=$(date +%s.%N)
    nice -n "${WRITER_NICE:-0}" "$bin" insert "$store" "$daily" --no-compact --label daily >/dev/null
    echo "insert took $(echo "$(date +%s.%N) - $t" | bc) s" >&2
    t=$(date +%s.%N)
    nice -n "${WRITER_NICE:-0}" "$bin" compact "$store" >/dev/null
    echo "compact took $(echo "$(date +%s.%N) - $t" | bc) s" >&2
) &
writer=$!
during=0
while kill -0 $writer 2>/dev/null; do
    oha -z "${seconds}s" -c 64 "${rate[@]}" --no-tui --rand-regex-url "$url" | sed -n '/Success rate/p;/Requests\/sec/p;/99.00%/p;/99.90%/p;/Status code/,$p'
    during=$((during + 1))
done
wait $writer
echo "server RSS after: $(($(awk '/VmRSS/ {print $2}' /proc/$server/status) / 1024)) MiB ($during windows of ${seconds} s during the writes)"
