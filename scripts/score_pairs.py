#!/usr/bin/env python3
"""Precision, recall and F1 of predicted near-duplicate pairs against exact-Jaccard ground
truth: the pair scorer for corpora built from a clone (scripts/build_eval_corpus.py,
scripts/exact_truth.py), with the interface ../shared/eval/README.md documents for that
corpus's score.py (written from that description; both give the same counts).

    scripts/score_pairs.py PRED.tsv GT_PAIRS.tsv [THRESHOLD | --threshold T] [--docs DOCS] [--json]

PRED.tsv      one predicted pair per line, id_a id_b separated by a tab or spaces; further
              columns, the order inside a pair, repeated pairs and self pairs are ignored,
              as are blank lines and lines starting with '#'; may be gzipped (.gz). The
              output of `simhashdb audit --pairs` qualifies.
GT_PAIRS.tsv  id_a id_b jaccard [inter union], TAB-separated: every pair with J >= 0.5.
              With inter and union the threshold test is exact (inter >= T * union in
              rationals), else the jaccard column is compared.
THRESHOLD     a pair is a true near-duplicate when J >= THRESHOLD (default 0.8, at least
              0.5: the ground truth lists nothing below).
DOCS          the corpus (JSON Lines with "id", or one id per line): predicted ids not in it
              are counted (they still count as false positives).

Prints TP, FP (gray: 0.5 <= J < THRESHOLD; and J < 0.5 or not in the truth), FN, precision,
recall, F1 and the recall per J band; --json prints the same as one JSON object (keys tp, fp,
fp_gray, fp_below_0.5, fn, precision, recall, f1, predicted_pairs, recall_by_band, ...).

Python 3 standard library only.
"""
import argparse
import gzip
import json
import sys
from fractions import Fraction


def fail(message):
    print(f"score_pairs.py: {message}", file=sys.stderr)
    sys.exit(2)


def lines_of(path):
    try:
        f = gzip.open(path, "rt", encoding="utf-8") if path.endswith(".gz") else \
            open(path, encoding="utf-8")
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    with f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\r\n")
            if line.strip() and not line.lstrip().startswith("#"):
                yield number, line


def ordered(a, b):
    return (a, b) if a <= b else (b, a)


def read_truth(path):
    """pair -> Fraction (exact with inter/union) or float jaccard."""
    truth = {}
    for number, line in lines_of(path):
        fields = line.split("\t")
        if len(fields) < 3:
            fail(f"{path}:{number}: expected id_a, id_b, jaccard[, inter, union]")
        try:
            if len(fields) >= 5:
                inter, union = int(fields[3]), int(fields[4])
                j = Fraction(inter, union) if union else Fraction(1)
            else:
                j = float(fields[2])
        except ValueError:
            fail(f"{path}:{number}: not a number in {line!r}")
        truth[ordered(fields[0], fields[1])] = j
    return truth


def read_predicted(path):
    pairs, lines, selfs, repeats = set(), 0, 0, 0
    for number, line in lines_of(path):
        fields = line.split()
        if len(fields) < 2:
            fail(f"{path}:{number}: expected two ids, got {line!r}")
        lines += 1
        a, b = fields[0], fields[1]
        if a == b:
            selfs += 1
            continue
        pair = ordered(a, b)
        if pair in pairs:
            repeats += 1
        else:
            pairs.add(pair)
    return pairs, lines, selfs, repeats


def read_doc_ids(path):
    ids = set()
    for number, line in lines_of(path):
        if line.lstrip().startswith("{"):
            try:
                ids.add(str(json.loads(line)["id"]))
            except (ValueError, KeyError) as e:
                fail(f"{path}:{number}: not a JSON object with an id ({e})")
        else:
            ids.add(line.split("\t")[0])
    return ids


def ratio(a, b):
    return a / b if b else 0.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("predicted")
    parser.add_argument("truth")
    parser.add_argument("threshold_arg", nargs="?", metavar="THRESHOLD")
    parser.add_argument("--threshold", dest="threshold_opt")
    parser.add_argument("--docs")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.threshold_arg and args.threshold_opt and \
            Fraction(args.threshold_arg) != Fraction(args.threshold_opt):
        fail("two different thresholds given")
    text = args.threshold_opt or args.threshold_arg or "0.8"
    try:
        threshold = Fraction(text)
    except (ValueError, ZeroDivisionError):
        fail(f"threshold {text!r} is not a number")
    if not Fraction(1, 2) <= threshold <= 1:
        fail(f"threshold {text} is outside [0.5, 1] (the ground truth lists pairs with J >= 0.5)")

    truth = read_truth(args.truth)
    predicted, lines, selfs, repeats = read_predicted(args.predicted)
    true = {p for p, j in truth.items() if j >= threshold}
    tp = len(predicted & true)
    gray = sum(1 for p in predicted if p in truth and p not in true)
    fp = len(predicted) - tp
    fn = len(true) - tp
    precision, recall = ratio(tp, tp + fp), ratio(tp, tp + fn)
    f1 = ratio(2 * precision * recall, precision + recall)

    edges = [threshold] + [Fraction(e) for e in ("0.9", "0.95", "1") if Fraction(e) > threshold]
    bands = []
    for low, high in zip(edges, edges[1:] + [None]):
        if high is None:
            if low != 1:
                continue
            members = [p for p in true if truth[p] >= 1]
            name = "J = 1"
        else:
            members = [p for p in true if low <= truth[p] < high]
            name = f"{float(low):g} <= J < {float(high):g}"
        found = sum(1 for p in members if p in predicted)
        bands.append({"band": name, "pairs": len(members), "found": found,
                      "recall": ratio(found, len(members))})

    result = {
        "threshold": float(threshold),
        "ground_truth_pairs_at_threshold": len(true),
        "ground_truth_pairs_listed": len(truth),
        "predicted_lines": lines,
        "predicted_pairs": len(predicted),
        "predicted_self_pairs_ignored": selfs,
        "predicted_repeats_ignored": repeats,
        "tp": tp, "fp": fp, "fp_gray": gray, "fp_below_0.5": fp - gray, "fn": fn,
        "precision": precision, "recall": recall, "f1": f1,
        "recall_by_band": bands,
    }
    if args.docs:
        ids = read_doc_ids(args.docs)
        result["predicted_unknown_ids"] = len({i for p in predicted for i in p} - ids)
        result["ground_truth_unknown_ids"] = len({i for p in truth for i in p} - ids)
    if args.json:
        print(json.dumps(result, indent=1))
        return
    print(f"threshold            J >= {float(threshold):g}")
    print(f"ground-truth pairs   {len(true)} at threshold ({len(truth)} listed, J >= 0.5)")
    print(f"predicted pairs      {len(predicted)} (from {lines} lines; {selfs} self pairs, "
          f"{repeats} repeats ignored)")
    print(f"TP {tp}   FP {fp} (gray 0.5<=J<{float(threshold):g}: {gray}, J<0.5: {fp - gray})"
          f"   FN {fn}")
    print(f"precision {precision:.4f}   recall {recall:.4f}   F1 {f1:.4f}")
    for band in bands:
        print(f"  recall {band['band']:<22} {band['found']}/{band['pairs']} = "
              f"{band['recall']:.4f}")
    if args.docs:
        print(f"predicted ids not in the corpus: {result['predicted_unknown_ids']}; "
              f"ground-truth ids not in the corpus: {result['ground_truth_unknown_ids']}")


if __name__ == "__main__":
    main()
