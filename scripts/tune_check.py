#!/usr/bin/env python3
"""Applies `tune`'s recommendation to a corpus end to end and compares it with the best
setting, both judged against exact ground truth (gt_pairs.tsv format, scripts/exact_truth.py).

    scripts/tune_check.py CORPUS.jsonl GT_PAIRS.tsv [TUNE FLAGS, e.g. --sample 2000]

1. `simhashdb tune CORPUS --json [FLAGS]`: the recommendation, from the tool's own truth.
2. For each use: `init` with its init_args, `insert CORPUS`, `audit --distance K` (and
   `--verify-text CORPUS --min-jaccard J` for the verified use), scored by
   ../shared/eval/score.py against GT_PAIRS.
3. `simhashdb tune CORPUS --json --gold GT_PAIRS`: every setting scored against the exact
   truth; the best F1 of each use.
Prints the applied F1, the best F1 and the gap. Environment: SIMHASHDB (the binary,
default target/release/simhashdb), SCORE (default ../shared/eval/score.py).
"""
import json
import os
import subprocess
import sys
import tempfile

BIN = os.environ.get("SIMHASHDB", "target/release/simhashdb")
SCORE = os.environ.get("SCORE", "../shared/eval/score.py")


def run(*args, **kw):
    return subprocess.run([str(a) for a in args], check=True, capture_output=True, text=True, **kw).stdout


def tune(*args):
    return [json.loads(line) for line in run(BIN, "tune", "--json", *args).splitlines()]


def main():
    corpus, gold, flags = sys.argv[1], sys.argv[2], sys.argv[3:]
    recommended = tune(corpus, *flags)[-1]["recommend"]
    scored = tune(corpus, "--gold", gold)
    with tempfile.TemporaryDirectory() as work:
        for use, mode in [("fingerprints_only", "fingerprints"), ("verified", "verified")]:
            choice = recommended[use]
            store = os.path.join(work, use)
            run(BIN, "init", store, *choice["init_args"])
            run(BIN, "insert", store, corpus)
            pairs = os.path.join(work, use + ".tsv")
            audit = [BIN, "audit", store, "--distance", choice["distance"], "--pairs", pairs]
            if use == "verified":
                audit += ["--verify-text", corpus, "--min-jaccard", choice["min_jaccard"]]
            run(*audit)
            applied = json.loads(run(sys.executable, SCORE, pairs, gold, "--json"))["f1"]
            best = max((l for l in scored if l.get("mode") == mode), key=lambda l: l["f1"])
            print(json.dumps({
                "corpus": os.path.basename(corpus), "use": use, "tune_flags": " ".join(flags),
                "recommended": f'{choice["scheme"]} k={choice["distance"]}',
                "applied_f1": round(applied, 4),
                "best": f'{best["scheme"]} k={best["distance"]}', "best_f1": round(best["f1"], 4),
                "gap": round(best["f1"] - applied, 4)}))


if __name__ == "__main__":
    main()
