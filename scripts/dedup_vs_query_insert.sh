#!/usr/bin/env bash
# The daily dedup against its hand-written equivalent, side by side: a 1e7 store, a daily
# input of 1e6 (20% copies of stored documents, 10% within 1-3 bits of one, 10% copies or
# near copies of earlier documents of the day, 60% new). A: `dedup --insert --output`;
# B: `query --input` of the day plus `insert` of what A kept. Each run starts from a fresh
# copy of the store; A and B alternate; medians of wall time and peak memory.
# Usage: scripts/dedup_vs_query_insert.sh BINARY [PAIRS] [STORED] [DAILY]
set -euo pipefail
bin="$1"; pairs="${2:-5}"; stored="${3:-10000000}"; daily="${4:-1000000}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work" "$stored" "$daily" <<'PY'
import random, sys
work, stored, daily = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
r = random.Random(42)
keep = []
with open(f"{work}/stored.tsv", "w") as f:
    for i in range(stored):
        fp = r.getrandbits(64)
        if i % 10 == 0:
            keep.append(fp)
        f.write(f"s{i}\t{fp:016x}\n")
today = []
with open(f"{work}/day.tsv", "w") as f:
    for i in range(daily):
        kind = r.randrange(10)
        if kind < 2:
            fp = r.choice(keep)
        elif kind < 3:
            fp = r.choice(keep)
            for _ in range(r.randint(1, 3)):
                fp ^= 1 << r.randrange(64)
        elif kind < 4 and today:
            fp = r.choice(today[-1000:])
            if r.random() < 0.5:
                fp ^= 1 << r.randrange(64)
        else:
            fp = r.getrandbits(64)
        today.append(fp)
        f.write(f"d{i}\t{fp:016x}\n")
PY
"$bin" init "$work/S" --expected-size "$stored" 2>/dev/null
"$bin" insert "$work/S" "$work/stored.tsv" --no-compact > /dev/null
"$bin" compact "$work/S" > /dev/null 2>&1 || true
# run LABEL ARGS...: wall seconds and peak KiB of one command, appended to $work/LABEL
run() {
    local label="$1"; shift
    /usr/bin/time -f "%e %M" -o "$work/t" "$@" > /dev/null 2>"$work/err" || { cat "$work/err"; exit 1; }
    cat "$work/t" >> "$work/$label"
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for _ in $(seq "$pairs"); do
    rm -rf "$work/A" && cp -a "$work/S" "$work/A" && sync
    run dedup "$bin" dedup "$work/A" "$work/day.tsv" --insert --output "$work/kept.tsv"
    rm -rf "$work/B" && cp -a "$work/S" "$work/B" && sync
    run query "$bin" query "$work/B" --input "$work/day.tsv"
    run insert "$bin" insert "$work/B" "$work/kept.tsv"
done
# The same documents end up stored.
"$bin" export "$work/A" | sort > "$work/a.txt"
"$bin" export "$work/B" | sort > "$work/b.txt"
cmp -s "$work/a.txt" "$work/b.txt" || { echo "the stores differ"; exit 1; }
echo "stored $stored, daily $daily, kept $(wc -l < "$work/kept.tsv"), $pairs pairs"
for label in dedup query insert; do
    printf '%-7s median %s s, peak %s MiB\n' "$label" \
        "$(cut -d' ' -f1 "$work/$label" | median)" \
        "$(( $(cut -d' ' -f2 "$work/$label" | median) / 1024 ))"
done
paste -d' ' "$work/dedup" "$work/query" "$work/insert" | awk '{r = $1 / ($3 + $5); print r}' | median | xargs printf 'dedup / (query + insert), median of the pairs: %.2f\n'
