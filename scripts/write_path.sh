#!/usr/bin/env bash
# The write path side by side (docs/benchmarks.md, "The write path"): two builds, A and B,
# alternating, RUNS times each, every run on a fresh store (or a fresh copy of one):
# 1. `insert` of 1e7 random fingerprints with ids from TSV at m = 6 (K = 3);
# 2. `compact` of 8 daily runs of 1.25e6 at m = 5 (1e8 table entries), each build merging a
#    store it wrote itself (an older build may not read a newer format);
# 3. with LOAD=1, a load of 1e8 at m = 5 through `insert` in 1e7-document batches, automatic
#    compactions included, then `compact` of that store (every run into one: 1e9 table
#    entries), once per build.
# Prints wall seconds, user and system CPU and peak KiB per run. INSERT=0 or COMPACT=0 skip
# the first two; LOAD_COMPACT=0 skips the compaction after the load. DATA=dir keeps the
# generated files there and uses those it finds (the same files for several invocations).
#
#   scripts/write_path.sh A_BINARY B_BINARY [RUNS]      (WORK=dir to keep the data elsewhere)
set -euo pipefail
a="$1"; b="$2"; runs="${3:-3}"
work=$(mktemp -d "${WORK:-/tmp}/write-path.XXXXXX")
trap 'rm -rf "$work"' EXIT
batches=1
[ "${LOAD:-0}" = 1 ] && batches=10
data="${DATA:-$work}"
mkdir -p "$data"
python3 - "$data" "$batches" <<'PY'
import os, random, sys
work, batches = sys.argv[1], int(sys.argv[2])
for b in range(batches):
    path = f"{work}/batch{b}.tsv"
    if os.path.exists(path):
        continue
    r = random.Random(1000 + b)
    with open(path + ".tmp", "w") as f:
        f.writelines(f"doc{b}-{i}\t{r.getrandbits(64):016x}\n" for i in range(10_000_000))
    os.rename(path + ".tmp", path)
# The first batch dealt into 8 daily files.
if not os.path.exists(f"{work}/day7.tsv"):
    days = [open(f"{work}/day{d}.tsv", "w") for d in range(8)]
    for i, line in enumerate(open(f"{work}/batch0.tsv")):
        days[i % 8].write(line)
    for d in days:
        d.close()
PY
t() { /usr/bin/time -f "%e s, user %U s, sys %S s, peak %M KiB" -o "$work/time" "$@" >/dev/null 2>&1; cat "$work/time"; }

[ "${INSERT:-1}" = 1 ] && echo "insert of 1e7 at m = 6:"
[ "${INSERT:-1}" = 1 ] && for r in $(seq "$runs"); do
  for bin in "$a" "$b"; do
    rm -rf "$work/s"; "$bin" init "$work/s" --blocks 6 >/dev/null 2>&1
    echo "  $(basename "$bin"): $(t "$bin" insert "$work/s" "$data/batch0.tsv")"
  done
done
rm -rf "$work/s"

[ "${COMPACT:-1}" = 1 ] && echo "compaction of 8 runs of 1.25e6 at m = 5:"
[ "${COMPACT:-1}" = 1 ] && for bin in "$a" "$b"; do
  dir="$work/days.$(basename "$bin")"
  "$bin" init "$dir" --blocks 5 >/dev/null 2>&1
  for d in 0 1 2 3 4 5 6 7; do "$bin" insert "$dir" "$data/day$d.tsv" --no-compact >/dev/null 2>&1; done
done
[ "${COMPACT:-1}" = 1 ] && for r in $(seq "$runs"); do
  for bin in "$a" "$b"; do
    rm -rf "$work/c"; cp -r "$work/days.$(basename "$bin")" "$work/c"; sync
    echo "  $(basename "$bin"): $(t "$bin" compact "$work/c")"
  done
done
rm -rf "$work/c" "$work"/days.*

if [ "${LOAD:-0}" = 1 ]; then
  echo "load of 1e8 at m = 5 in 1e7 batches (compactions included):"
  for bin in "$a" "$b"; do
    rm -rf "$work/l"; "$bin" init "$work/l" --blocks 5 >/dev/null 2>&1
    start=$(date +%s.%N)
    for n in $(seq 0 $((batches - 1))); do "$bin" insert "$work/l" "$data/batch$n.tsv" >/dev/null 2>&1; done
    end=$(date +%s.%N)
    echo "  $(basename "$bin"): $(echo "$end - $start" | bc) s, $("$bin" stats "$work/l" | grep -E '^runs')"
    [ "${LOAD_COMPACT:-1}" = 1 ] && echo "  $(basename "$bin") compact of that store: $(t "$bin" compact "$work/l")"
    rm -rf "$work/l"
  done
fi
