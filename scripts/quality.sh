#!/usr/bin/env bash
# Precision, recall and F1 of near-duplicate pairs on ../shared/eval, per scheme and distance.
#
# usage: scripts/quality.sh [SCHEME_ARGS...]   (e.g. --scheme words --shingle 3 --weight set)
# Fingerprints the corpus with `simhashdb fingerprint`, stores it with K = 8, audits at
# k = 0..8 and scores each pair list with the corpus's score.py (truth: J >= 0.8).
# Prints one markdown table row per k: k, pairs, precision, recall, F1.
# VERIFY=J also verifies each pair against the text (audit --verify-text --min-jaccard J).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
eval_dir="${EVAL_DIR:-$here/../shared/eval}"
bin="$here/target/release/simhashdb"
[ -x "$bin" ] || cargo build --release --manifest-path "$here/Cargo.toml" >&2
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

"$bin" fingerprint "$@" "$eval_dir/docs.jsonl" > "$work/fp.tsv"
"$bin" init "$work/store" --distance 8 --expected-size 1e4 2> /dev/null  # M = 10
"$bin" insert "$work/store" "$work/fp.tsv" > /dev/null
for k in 0 1 2 3 4 5 6 7 8; do
    verify=()
    [ -n "${VERIFY:-}" ] && verify=(--verify-text "$eval_dir/docs.jsonl" --min-jaccard "$VERIFY")
    "$bin" audit "$work/store" --distance "$k" --pairs "$work/pairs.tsv" "${verify[@]}" 2> /dev/null
    python3 "$eval_dir/score.py" "$work/pairs.tsv" "$eval_dir/gt_pairs.tsv" --json |
        python3 -c "
import json, sys
r = json.load(sys.stdin)
get = lambda *names: next(r[n] for n in names if n in r)
print(f\"| $k | {get('predicted_pairs')} | {get('precision'):.3f} | {get('recall'):.3f} | {get('f1'):.3f} |\")"
done
