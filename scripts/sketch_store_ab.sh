#!/usr/bin/env bash
# A store with sketches, two builds side by side (docs/benchmarks.md, "Sketches in postings"):
# N documents (default 1e6: a tenth near copies, 1% exact copies, a 2,000-copy page; each with
# a random 128-byte sketch, near copies with one that differs in a bit), as
# scripts/sketched_documents.py makes them. Each build makes its own store; then,
# alternating A and B, RUNS times each:
# 1. `insert` of the N documents with their sketches into a new store;
# 2. `audit --pairs` (ids read from the postings, no verification);
# 3. `audit --min-jaccard 0.8 --pairs` (ids and sketches read together);
# 4. `audit --min-jaccard 0.8 --duplicates`;
# 5. `query --input` of 10,000 fingerprints (half a bit from a stored one): ids from the
#    postings;
# 6. `export --sketch` (every document's sketch looked up).
# Prints wall seconds and peak KiB per run, and checks that both builds' outputs are equal.
#
#   scripts/sketch_store_ab.sh A_BINARY B_BINARY [RUNS] [N]
set -euo pipefail
a="$1"; b="$2"; runs="${3:-3}"; n="${4:-1000000}"
work=$(mktemp -d "${WORK:-/tmp}/sketch-ab.XXXXXX")
trap 'rm -rf "$work"' EXIT
t() { /usr/bin/time -f "%e s, peak %M KiB" -o "$work/time" "$@" >/dev/null 2>&1; cat "$work/time"; }

python3 "$(dirname "$0")/sketched_documents.py" "$n" "$work/docs.jsonl" "$work/queries.txt"
for bin in "$a" "$b"; do
  name=$(basename "$bin")
  "$bin" init "$work/$name" --sketch >/dev/null 2>&1
  "$bin" insert "$work/$name" "$work/docs.jsonl" >/dev/null 2>&1
done
for r in $(seq "$runs"); do
  for bin in "$a" "$b"; do
    name=$(basename "$bin"); s="$work/$name"
    rm -rf "$work/fresh"; "$bin" init "$work/fresh" --sketch >/dev/null 2>&1
    echo "$name insert: $(t "$bin" insert "$work/fresh" "$work/docs.jsonl")"
    echo "$name audit --pairs: $(t "$bin" audit "$s" --pairs "$work/$name.p1")"
    echo "$name audit --min-jaccard --pairs: $(t "$bin" audit "$s" --min-jaccard 0.8 --pairs "$work/$name.p2")"
    echo "$name audit --min-jaccard --duplicates: $(t "$bin" audit "$s" --min-jaccard 0.8 --duplicates "$work/$name.d2")"
    echo "$name query 1e4: $(t sh -c "'$bin' query '$s' --input '$work/queries.txt' > '$work/$name.q'")"
    echo "$name export --sketch: $(t sh -c "'$bin' export '$s' --format jsonl --sketch | sort > '$work/$name.e'")"
  done
done
na=$(basename "$a"); nb=$(basename "$b")
for out in p1 p2 d2 q e; do
  if cmp -s <(sort "$work/$na.$out") <(sort "$work/$nb.$out"); then echo "$out: equal ($(wc -l < "$work/$na.$out") lines)"; else echo "$out: DIFFERENT"; fi
done
echo "du: $na $(du -s --block-size=1 "$work/$na" | cut -f1), $nb $(du -s --block-size=1 "$work/$nb" | cut -f1)"
