#!/usr/bin/env bash
# Precision, recall and F1 of near-duplicate pairs on a corpus with exact ground truth, per
# scheme and distance.
#
# usage: scripts/quality.sh [CORPUS_DIR] [SCHEME_ARGS...]   (e.g. --scheme words --shingle 3 --weight set)
# CORPUS_DIR holds docs.jsonl and gt_pairs.tsv (default ../shared/eval, or $EVAL_DIR;
# scripts/build_eval_corpus.py makes one from files any Debian machine has). Fingerprints the
# corpus with `simhashdb fingerprint`, stores it with K = 8, audits at k = 0..8 and scores each
# pair list (truth: J >= 0.8) with the corpus's score.py, or scripts/score_pairs.py when the
# corpus has none. Prints one markdown table row per k: k, pairs, precision, recall, F1.
# VERIFY=J also verifies each pair against the text (audit --verify-text --min-jaccard J).
# SKETCH=N instead makes the store with N-byte sketches (init --sketch --sketch-bytes N,
# SCHEME_ARGS given to init), inserts the texts and verifies each pair with the sketches
# (audit --min-jaccard ${MIN_JACCARD:-0.8}).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
eval_dir="${EVAL_DIR:-$here/../shared/eval}"
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ] && [ -d "$1" ]; then eval_dir=$1; shift; fi
scorer="$eval_dir/score.py"
[ -f "$scorer" ] || scorer="$here/scripts/score_pairs.py"
bin="$here/target/release/simhashdb"
[ -x "$bin" ] || cargo build --release --manifest-path "$here/Cargo.toml" >&2
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

if [ -n "${SKETCH:-}" ]; then
    "$bin" init "$work/store" --distance 8 --expected-size 1e4 --sketch --sketch-bytes "$SKETCH" "$@" 2> /dev/null
    "$bin" insert "$work/store" "$eval_dir/docs.jsonl" > /dev/null
else
    "$bin" fingerprint "$@" "$eval_dir/docs.jsonl" > "$work/fp.tsv"
    "$bin" init "$work/store" --distance 8 --expected-size 1e4 2> /dev/null  # M = 10
    "$bin" insert "$work/store" "$work/fp.tsv" > /dev/null
fi
for k in 0 1 2 3 4 5 6 7 8; do
    verify=()
    [ -n "${VERIFY:-}" ] && verify=(--verify-text "$eval_dir/docs.jsonl" --min-jaccard "$VERIFY")
    [ -n "${SKETCH:-}" ] && verify=(--min-jaccard "${MIN_JACCARD:-0.8}")
    "$bin" audit "$work/store" --distance "$k" --pairs "$work/pairs.tsv" "${verify[@]}" 2> /dev/null
    python3 "$scorer" "$work/pairs.tsv" "$eval_dir/gt_pairs.tsv" --json |
        python3 -c "
import json, sys
r = json.load(sys.stdin)
get = lambda *names: next(r[n] for n in names if n in r)
print(f\"| $k | {get('predicted_pairs'):,} | {get('precision'):.4f} | {get('recall'):.4f} | {get('f1'):.4f} |\")"
done
