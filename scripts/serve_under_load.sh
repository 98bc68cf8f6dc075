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
# Needs oha (cargo install oha), python3 and a release build (cargo build --release). Prints
# the server's resident memory when ready, oha's summary for each phase, and how long the
# insert and the compaction took; after each window during the writes, the server's own
# latency for GET /v1/query in that window (two scrapes of /metrics: from the request being
# routed to its response being built; not the wait before the server reads it, nor the
# writing of the answer). Stops the server and the writer on exit, also on failure.
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
before=$(mktemp)
after=$(mktemp)
"$bin" serve "$store" --listen "127.0.0.1:$port" >"$log" 2>&1 &
server=$!
writer=
# On exit the writer's insert or compaction is stopped too (a stopped one leaves the store
# as last committed).
trap 'if [ -n "$writer" ]; then pkill -TERM -P "$writer" || true; fi; kill -TERM $server $writer 2>/dev/null || true; wait $server 2>/dev/null || true; rm -f "$log" "$before" "$after"' EXIT
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
# The server's latency histogram of /v1/query between two scrapes of /metrics.
server_side() {
    python3 - "$1" "$2" <<'EOF'
import re, sys
def buckets(path):
    pattern = r'simhashdb_http_request_duration_seconds_bucket\{endpoint="/v1/query",le="([^"]+)"\} (\d+)'
    return {m[1]: int(m[2]) for m in re.finditer(pattern, open(path).read())}
a, b = buckets(sys.argv[1]), buckets(sys.argv[2])
d = {le: n - a.get(le, 0) for le, n in b.items()}
total = d.get("+Inf", 0)
if total == 0:
    sys.exit("  server side: no requests counted (is /metrics answering?)")
bounds = sorted((float(le), n) for le, n in d.items() if le != "+Inf")
p99 = next((le for le, n in bounds if n >= 0.99 * total), float("inf"))
bound, within = max(((le, n) for le, n in bounds if le <= 0.005), default=(0.005, 0))
print(f"  server side: {total} requests, p99 within {p99 * 1e3:.2f} ms, "
      f"{100 * (total - within) / total:.3f}% over {bound * 1e3:.2f} ms")
EOF
}

during=0
while kill -0 $writer 2>/dev/null; do
    curl -sf "http://127.0.0.1:$port/metrics" >"$before" || true
    oha -z "${seconds}s" -c 64 "${rate[@]}" --no-tui --rand-regex-url "$url" | sed -n '/Success rate/p;/Requests\/sec/p;/99.00%/p;/99.90%/p;/Status code/,$p'
    curl -sf "http://127.0.0.1:$port/metrics" >"$after" || true
    server_side "$before" "$after" || true
    during=$((during + 1))
done
wait $writer
echo "server RSS after: $(($(awk '/VmRSS/ {print $2}' /proc/$server/status) / 1024)) MiB ($during windows of ${seconds} s during the writes)"
