#!/usr/bin/env bash
# What verification sketches cost a text insert, side by side in one run (docs/benchmarks.md,
# "The text path"): the insert of CORPUS (JSON Lines of {"id", "text"}), COPIES times under
# other ids (default 3), into a fresh store without sketches and into one with 128-byte
# sketches, alternating, RUNS times each, for each binary given (e.g. main as it was and this
# build, built beside it). Prints the median seconds of each and the throughput with sketches
# as a ratio of the throughput without.
#
#   COPIES=3 scripts/sketch_text_insert.sh CORPUS.jsonl RUNS SIMHASHDB [SIMHASHDB...]
set -euo pipefail
corpus=${1:?usage: $0 CORPUS.jsonl RUNS SIMHASHDB [SIMHASHDB...]}
runs=${2:?runs}
shift 2
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "RUNS: expected a count, got '$runs'" >&2; exit 2; }
[ $# -gt 0 ] || { echo "name at least one simhashdb binary" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$(dirname "$0")/copies.py" "$corpus" "$work/texts.jsonl" "${COPIES:-3}"

for r in $(seq "$runs"); do
  for b in $(seq $#); do
    bin=${!b}
    for kind in plain sketch; do
      rm -rf "$work/store"
      sketch=(); [ $kind = sketch ] && sketch=(--sketch)
      "$bin" init "$work/store" "${sketch[@]}" >/dev/null 2>"$work/err" || { cat "$work/err"; exit 1; }
      start=$(date +%s.%N)
      "$bin" insert "$work/store" "$work/texts.jsonl" >/dev/null 2>"$work/err" || { cat "$work/err"; exit 1; }
      end=$(date +%s.%N)
      echo "$b $kind $start $end" >>"$work/times"
    done
  done
done

python3 - "$work/times" "$@" <<'PY'
import statistics, sys
times = {}
for line in open(sys.argv[1]):
    b, kind, start, end = line.split()
    times.setdefault((int(b), kind), []).append(float(end) - float(start))
for b, binary in enumerate(sys.argv[2:], 1):
    plain = statistics.median(times[(b, "plain")])
    sketch = statistics.median(times[(b, "sketch")])
    print(f"{binary}: without {plain:.2f} s, with 128-byte sketches {sketch:.2f} s (medians of "
          f"{len(times[(b, 'plain')])}); throughput ratio {plain / sketch:.3f}")
PY
