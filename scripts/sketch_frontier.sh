#!/usr/bin/env bash
# F1 at J >= 0.8 on ../shared/eval against bytes per document, for K x sketch bytes: stores
# made with `init --distance K --expected-size 1e4 [--sketch --sketch-bytes N]`, the corpus
# inserted as text, `audit --min-jaccard 0.8` (fingerprints alone without a sketch), scored
# by score.py. Bytes per document: the permuted tables' block bytes plus the sketches' block
# bytes (ids and batches included), from `stats --json`, per document.
#
#   scripts/sketch_frontier.sh [SIMHASHDB] [EVAL_DIR]
set -euo pipefail
bin=${1:-target/release/simhashdb}
eval_dir=${2:-../shared/eval}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "| K | sketch bytes | pairs | precision | recall | F1 | table bytes / doc | sketch bytes / doc | total bytes / doc |"
echo "|---|---|---|---|---|---|---|---|---|"
for k in 3 4 5 6 7 8; do
  for bytes in 0 64 128 160 256 512 1024; do
    store="$work/s-$k-$bytes"
    if [ "$bytes" = 0 ]; then
      "$bin" init "$store" --distance "$k" --expected-size 1e4 2>/dev/null
      "$bin" insert "$store" "$eval_dir/docs.jsonl" >/dev/null
      "$bin" audit "$store" --pairs "$work/pairs.tsv" 2>/dev/null
    else
      "$bin" init "$store" --distance "$k" --expected-size 1e4 --sketch --sketch-bytes "$bytes" 2>/dev/null
      "$bin" insert "$store" "$eval_dir/docs.jsonl" >/dev/null
      "$bin" audit "$store" --min-jaccard 0.8 --pairs "$work/pairs.tsv" 2>/dev/null
    fi
    score=$(python3 "$eval_dir/score.py" --json "$work/pairs.tsv" "$eval_dir/gt_pairs.tsv")
    "$bin" stats "$store" --json > "$work/stats.json"
    python3 - "$k" "$bytes" "$score" "$work/stats.json" <<'PY'
import json, sys
k, b, score, stats = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), json.load(open(sys.argv[4]))
docs = stats["documents"]
tables = sum(t["block_bytes"] for t in stats["per_table"]) / docs
sketch = stats["sketches_block_bytes"] / docs
print(f"| {k} | {b if b != '0' else 'none'} | {score['predicted_pairs']:,} | {score['precision']:.4f} | {score['recall']:.4f} | {score['f1']:.4f} | {tables:.0f} | {sketch:.0f} | {tables + sketch:.0f} |")
PY
    rm -rf "$store"
  done
done
