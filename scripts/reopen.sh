#!/usr/bin/env bash
# Reopen time after a crash: SIGKILL an insert into a big store mid-way, then time what the
# next commands pay to open it. Usage: scripts/reopen.sh STORE [KILL_AFTER_SECONDS]
# (make STORE with: cargo bench --bench compact -- 100000000 --runs 10 --dir STORE --keep)
set -euo pipefail
cd "$(dirname "$0")/.."
store="$1"; after="${2:-3}"
bin=target/release/simhashdb
cargo build --release --quiet
tsv=$(mktemp --suffix=.tsv)
trap 'rm -f "$tsv"' EXIT
python3 - "$tsv" <<'PY'
import random, sys
random.seed(7)
with open(sys.argv[1], "w") as f:
    for i in range(1_000_000):
        f.write(f"reopen-{i}\t{random.getrandbits(64):016x}\n")
PY
"$bin" insert "$store" "$tsv" --no-compact > /dev/null 2>&1 &
pid=$!
sleep "$after"
kill -9 "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
echo "killed insert after ${after}s; run dirs now: $(ls "$store/runs" | wc -l)"
t() { local s; s=$(date +%s.%N); "$@" > /dev/null; printf "%.3f s: %s\n" "$(echo "$(date +%s.%N) - $s" | bc)" "$2"; }
t "$bin" stats "$store"
t "$bin" query "$store" 0123456789abcdef
echo x$'\t'0 | t "$bin" insert "$store" --no-compact
