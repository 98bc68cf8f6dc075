#!/usr/bin/env bash
# A store without sketches, two builds side by side (docs/benchmarks.md, "Named postings"):
# N documents (default 1e6: a tenth near copies, 1% exact copies, a 2,000-copy page), as
# scripts/sketched_documents.py makes them, inserted as bare fingerprints (the sketches left
# out). Each build makes its own store; then, alternating A and B, RUNS times each:
# 1. `insert` of the N documents into a new store;
# 2. `audit --pairs` and `audit --duplicates` (the ids of every fingerprint in a pair);
# 3. `query --input` of 10,000 fingerprints (half a bit from a stored one);
# 4. `get` of 10,000 ids (half absent);
# 5. `dedup` of 100,000 new documents (a tenth near copies of stored ones) against the store.
# Prints wall seconds and peak KiB per run, checks that both builds' outputs are equal, and
# prints each store's size.
#
#   scripts/plain_store_ab.sh A_BINARY B_BINARY [RUNS] [N]
set -euo pipefail
a="$1"; b="$2"; runs="${3:-3}"; n="${4:-1000000}"
work=$(mktemp -d "${WORK:-/tmp}/plain-ab.XXXXXX")
trap 'rm -rf "$work"' EXIT
t() { /usr/bin/time -f "%e s, peak %M KiB" -o "$work/time" "$@" >/dev/null 2>&1; cat "$work/time"; }

python3 "$(dirname "$0")/sketched_documents.py" "$n" "$work/docs.jsonl" "$work/queries.txt"
python3 - "$work" <<'PY'
import json, random, sys
work = sys.argv[1]
rng = random.Random(11)
stored = []
with open(f"{work}/docs.jsonl") as src, open(f"{work}/docs.tsv", "w") as out:
    for line in src:
        d = json.loads(line)
        out.write(f"{d['id']}\t{d['fingerprint']}\n")
        if len(stored) < 200000:
            stored.append((d["id"], int(d["fingerprint"], 16)))
with open(f"{work}/ids.txt", "w") as out:
    for i in range(10000):
        out.write(f"{rng.choice(stored)[0] if i % 2 else f'absent-{i}'}\n")
with open(f"{work}/daily.tsv", "w") as out:
    for i in range(100000):
        fp = rng.getrandbits(64)
        if rng.random() < 0.1:
            fp = rng.choice(stored)[1] ^ (1 << rng.randrange(64))
        out.write(f"new-{i}\t{fp:016x}\n")
PY
for bin in "$a" "$b"; do
  name=$(basename "$bin")
  "$bin" init "$work/$name" >/dev/null 2>&1
  "$bin" insert "$work/$name" "$work/docs.tsv" >/dev/null 2>&1
done
for r in $(seq "$runs"); do
  for bin in "$a" "$b"; do
    name=$(basename "$bin"); s="$work/$name"
    rm -rf "$work/fresh"; "$bin" init "$work/fresh" >/dev/null 2>&1
    echo "$name insert: $(t "$bin" insert "$work/fresh" "$work/docs.tsv")"
    echo "$name audit --pairs: $(t "$bin" audit "$s" --pairs "$work/$name.p")"
    echo "$name audit --duplicates: $(t "$bin" audit "$s" --duplicates "$work/$name.d")"
    echo "$name query 1e4: $(t sh -c "'$bin' query '$s' --input '$work/queries.txt' > '$work/$name.q'")"
    echo "$name get 1e4: $(t sh -c "'$bin' get '$s' \$(cat '$work/ids.txt') > '$work/$name.g' || true")"
    echo "$name dedup 1e5: $(t sh -c "'$bin' dedup '$s' '$work/daily.tsv' > '$work/$name.k'")"
  done
done
na=$(basename "$a"); nb=$(basename "$b")
for out in p d q g k; do
  if cmp -s <(sort "$work/$na.$out") <(sort "$work/$nb.$out"); then echo "$out: equal ($(wc -l < "$work/$na.$out") lines)"; else echo "$out: DIFFERENT"; fi
done
echo "du: $na $(du -s --block-size=1 "$work/$na" | cut -f1), $nb $(du -s --block-size=1 "$work/$nb" | cut -f1)"
