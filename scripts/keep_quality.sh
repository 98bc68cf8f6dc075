#!/usr/bin/env bash
# The keep/drop lists of every local client and setting on a corpus with exact ground truth,
# scored as a user judges a cleaned corpus (scripts/score_keep.py: dropped, lost, left at
# J >= 0.8), and each audit's list checked against dedup of the same documents replayed in
# the rule's order (one batch: by id) into an empty store with the same settings.
#
#   scripts/keep_quality.sh [CORPUS_DIR] [WORK_DIR]
#
# CORPUS_DIR holds docs.jsonl ({"id", "text"}) and gt_pairs.tsv (default ../shared/eval;
# scripts/build_eval_corpus.py makes both from files any Debian machine has; scripts/exact_truth.py
# the second for any corpus). Needs a release build
# (cargo build --release) and python3. Prints one table row per list. With SPARK_PYTHON set
# to a Python with this package, pyspark and pyarrow (python/test.sh's venv:
# target/python-venv/bin/python), also the Spark dedup job's lists, on local[2], checked
# against the audit's.
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=$(realpath "${1:-../shared/eval}")
work=$(realpath -m "${2:-target/keep-quality}")
bin=$(realpath target/release/simhashdb)
score() { python3 scripts/score_keep.py "$1" "$corpus/gt_pairs.tsv" --docs "$corpus/docs.jsonl" --json; }
rm -rf "$work" && mkdir -p "$work"
# The documents in the rule's order for one batch: by id (bytes).
python3 - "$corpus/docs.jsonl" "$work/by_id.jsonl" <<'EOF'
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
lines.sort(key=lambda l: json.loads(l)["id"].encode())
open(sys.argv[2], "w", encoding="utf-8").write("\n".join(lines) + "\n")
EOF
printf '| list | settings | dropped | lost | left | equals the replay |\n|---|---|---|---|---|---|\n'
# What one document per connected component drops (the rule the audit had before, and what
# clusters would give as a keep rule): every member of a cluster but its smallest id (one
# batch).
components() {
    python3 - "$1" "$2" <<'EOF'
import sys
clusters = {}
for line in open(sys.argv[1], encoding="utf-8"):
    number, id = line.rstrip("\n").split("\t")[:2]
    clusters.setdefault(number, []).append(id)
with open(sys.argv[2], "w", encoding="utf-8") as out:
    for members in clusters.values():
        keep = min(members, key=str.encode)
        out.writelines(f"{m}\t{keep}\n" for m in members if m != keep)
EOF
}
row() { # name, settings, dropped list, replay list (or -)
    local s; s=$(score "$3")
    local same=-
    if [ "$4" != - ]; then cmp -s "$3" "$4" && same=yes || same=NO; fi
    python3 -c 'import json, sys
r = json.loads(sys.argv[1])
print("| %s | %s | {:,} | {:,} | {:,} | %s |".format(r["dropped"], r["lost"], r["left"])
      % (sys.argv[2], sys.argv[3], sys.argv[4]))' "$s" "$1" "$2" "$same"
}
for setting in "default" "sketch8"; do
    case $setting in
        default) init=(); audit=(); label="K = 3, fingerprints only" ;;
        sketch8) init=(--sketch --distance 8); audit=(--min-jaccard 0.8); label="--distance 8, 128-byte sketches, --min-jaccard 0.8" ;;
    esac
    store=$work/$setting replay=$work/$setting-replay
    "$bin" init "$store" "${init[@]}" 2>/dev/null
    "$bin" insert "$store" "$corpus/docs.jsonl" >/dev/null 2>&1
    "$bin" audit "$store" "${audit[@]}" --duplicates "$work/$setting.audit.tsv" \
        --clusters "$work/$setting.clusters.tsv" 2>/dev/null
    components "$work/$setting.clusters.tsv" "$work/$setting.components.tsv"
    "$bin" init "$replay" "${init[@]}" 2>/dev/null
    "$bin" dedup "$replay" "$work/by_id.jsonl" "${audit[@]}" --output /dev/null \
        --duplicates "$work/$setting.dedup.tsv" 2>/dev/null
    row "audit --duplicates" "$label" "$work/$setting.audit.tsv" "$work/$setting.dedup.tsv"
    row "dedup (documents by id)" "$label" "$work/$setting.dedup.tsv" -
    row "one per cluster (components: not a keep rule)" "$label" "$work/$setting.components.tsv" -
    if [ "$setting" = sketch8 ]; then
        "$bin" audit "$store" --duplicates "$work/raw8.audit.tsv" \
            --clusters "$work/raw8.clusters.tsv" 2>/dev/null
        components "$work/raw8.clusters.tsv" "$work/raw8.components.tsv"
        "$bin" init "$work/raw8-replay" --distance 8 2>/dev/null
        "$bin" dedup "$work/raw8-replay" "$work/by_id.jsonl" --output /dev/null \
            --duplicates "$work/raw8.dedup.tsv" 2>/dev/null
        row "audit --duplicates" "--distance 8, fingerprints only" "$work/raw8.audit.tsv" "$work/raw8.dedup.tsv"
        row "one per cluster (components: not a keep rule)" "--distance 8, fingerprints only" "$work/raw8.components.tsv" -
    fi
done
if [ -n "${SPARK_PYTHON:-}" ]; then
    export PYSPARK_PYTHON=$(realpath -s "$SPARK_PYTHON")
    "$SPARK_PYTHON" - "$corpus/docs.jsonl" "$work/docs.parquet" <<'EOF'
import json, sys
import pyarrow as pa, pyarrow.parquet as pq
rows = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8")]
pq.write_table(pa.table({"id": [r["id"] for r in rows], "text": [r["text"] for r in rows]}),
               sys.argv[2])
EOF
    spark() { # name, audit list, flags...
        local name=$1 audited=$2; shift 2
        rm -rf "$work/spark-$name" "$work/spark-$name-kept"
        "$SPARK_PYTHON" -m simhashdb.spark dedup --master 'local[2]' --input "$work/docs.parquet" \
            --output "$work/spark-$name-kept" --duplicates "$work/spark-$name" \
            --text-column text "$@" 2>/dev/null
        "$SPARK_PYTHON" - "$work/spark-$name" "$audited" "$work/spark-$name.tsv" <<'EOF'
import sys
import pyarrow.parquet as pq
t = pq.read_table(sys.argv[1]).to_pylist()
got = {r["id"]: (r["kept_id"], str(r["distance"])) for r in t}
audited = {f[0]: (f[1], f[2]) for f in (l.rstrip("\n").split("\t") for l in open(sys.argv[2]))}
open(sys.argv[3], "w").writelines(f"{i}\t{k}\t{d}\n" for i, (k, d) in sorted(got.items()))
sys.exit(0 if got == audited else "the Spark job's list differs from the audit's")
EOF
    }
    spark default "$work/default.audit.tsv" && same=yes || same=NO
    row "Spark dedup job (equals the audit: $same)" "K = 3, fingerprints only" "$work/spark-default.tsv" -
    spark sketch8 "$work/sketch8.audit.tsv" --distance 8 --min-jaccard 0.8 && same=yes || same=NO
    row "Spark dedup job (equals the audit: $same)" "--distance 8, 128-byte sketches, --min-jaccard 0.8" "$work/spark-sketch8.tsv" -
fi
