#!/usr/bin/env bash
# Verified lookups in a store with sketches, two builds side by side (docs/benchmarks.md,
# "Sketches in docs entries (format 9)"): a store of N documents grown from the eval corpus
# (scripts/grow_corpus.py: its 8,212 documents, then copies with 0-20% of their words
# replaced), inserted as text into `init --sketch` by each build; then, alternating A and B,
# RUNS times each:
# 1. `query --input` of the eval corpus's 8,212 texts with --min-jaccard 0.8 (each text's
#    stored near copies are candidates, each verified with its sketch);
# 2. `dedup --min-jaccard 0.8` of the same texts against the store (read only).
# Prints wall seconds and peak KiB per run, and checks that both builds' outputs are equal
# (the duplicates but for their stored match's commit time).
#
#   scripts/verified_lookups_ab.sh A_BINARY B_BINARY [RUNS] [N]
set -euo pipefail
a="$1"; b="$2"; runs="${3:-5}"; n="${4:-100000}"
eval_docs="${EVAL:-$(dirname "$0")/../../shared/eval}/docs.jsonl"
work=$(mktemp -d "${WORK:-/tmp}/verified-ab.XXXXXX")
trap 'rm -rf "$work"' EXIT
t() { /usr/bin/time -f "%e s, peak %M KiB" -o "$work/time" "$@" >/dev/null 2>&1; cat "$work/time"; }

python3 "$(dirname "$0")/grow_corpus.py" "$n" "$work/grown.jsonl" "$eval_docs"
for bin in "$a" "$b"; do
  name=$(basename "$bin")
  "$bin" init "$work/$name" --sketch >/dev/null 2>&1
  "$bin" insert "$work/$name" "$work/grown.jsonl" >/dev/null 2>&1
done
rm "$work/grown.jsonl"
for r in $(seq "$runs"); do
  for bin in "$a" "$b"; do
    name=$(basename "$bin"); s="$work/$name"
    echo "$name query --min-jaccard: $(t sh -c "'$bin' query '$s' --input '$eval_docs' --min-jaccard 0.8 > '$work/$name.q'")"
    echo "$name dedup --min-jaccard: $(t "$bin" dedup "$s" "$eval_docs" --min-jaccard 0.8 --output "$work/$name.kept" --duplicates "$work/$name.d")"
  done
done
na=$(basename "$a"); nb=$(basename "$b")
# The duplicates' last column is the commit time of the batch that stored their match: each
# build made its own store.
for out in q kept d; do
  if cmp -s <(cut -f1-5 "$work/$na.$out") <(cut -f1-5 "$work/$nb.$out"); then
    echo "$out: equal ($(wc -l < "$work/$na.$out") lines)"
  else
    echo "$out: DIFFERENT"
  fi
done
