#!/usr/bin/env bash
# The costs of verification sketches, side by side in one run (docs/benchmarks.md):
# 1. text insert of the eval corpus (8,212 documents, 3 copies under other ids: 24,636) into a
#    store with and without sketches, alternating, RUNS times each;
# 2. an audit at N documents (default 1e6: a tenth near copies, 1% exact copies, a 2,000-copy
#    page; each document with a random 128-byte sketch, near copies with a sketch that differs
#    in a few bits) with and without --min-jaccard 0.8, alternating;
# 3. the bytes on disk of that store with and without sketches (stats --json total_bytes).
#
#   scripts/sketch_costs.sh [SIMHASHDB] [N] [RUNS]
set -euo pipefail
bin=${1:-target/release/simhashdb}
n=${2:-1000000}
runs=${3:-5}
eval_dir=${EVAL:-../shared/eval}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
t() { /usr/bin/time -f "%e %M" -o "$work/time" "$@" >/dev/null 2>&1; cat "$work/time"; }

python3 - "$eval_dir/docs.jsonl" "$work/texts.jsonl" <<'PY'
import json, sys
with open(sys.argv[2], "w") as out:
    for copy in range(3):
        for line in open(sys.argv[1]):
            d = json.loads(line)
            out.write(json.dumps({"id": f"{d['id']}-{copy}", "text": d["text"]}) + "\n")
PY
echo "text insert (24,636 documents), seconds and peak KiB per run:"
for r in $(seq "$runs"); do
  for kind in plain sketch; do
    rm -rf "$work/$kind"
    if [ $kind = sketch ]; then "$bin" init "$work/$kind" --sketch 2>/dev/null; else "$bin" init "$work/$kind" 2>/dev/null; fi
    echo "$kind $(t "$bin" insert "$work/$kind" "$work/texts.jsonl")"
  done
done

python3 "$(dirname "$0")/sketched_documents.py" "$n" "$work/docs.jsonl"
for kind in plain sketch; do
  rm -rf "$work/$kind"
  if [ $kind = sketch ]; then "$bin" init "$work/$kind" --sketch 2>/dev/null; else "$bin" init "$work/$kind" 2>/dev/null; fi
  "$bin" insert "$work/$kind" "$work/docs.jsonl" >/dev/null
  echo "$kind store of $n: total_bytes $("$bin" stats "$work/$kind" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["total_bytes"])')"
done
echo "audit of $n documents, seconds and peak KiB per run (pairs written, then --duplicates only):"
for r in $(seq "$runs"); do
  rm -f "$work/p1.tsv" "$work/p2.tsv"
  echo "fingerprints $(t "$bin" audit "$work/sketch" --pairs "$work/p1.tsv")"
  echo "sketches $(t "$bin" audit "$work/sketch" --min-jaccard 0.8 --pairs "$work/p2.tsv")"
  echo "fingerprints-duplicates $(t "$bin" audit "$work/sketch" --duplicates "$work/d1.tsv")"
  echo "sketches-duplicates $(t "$bin" audit "$work/sketch" --min-jaccard 0.8 --duplicates "$work/d2.tsv")"
done
echo "pairs: $(wc -l < "$work/p1.tsv") candidates, $(wc -l < "$work/p2.tsv") verified"
