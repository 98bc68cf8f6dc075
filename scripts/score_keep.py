#!/usr/bin/env python3
"""Score a keep/drop list the way a user judges a cleaned corpus, against exact-Jaccard
ground truth.

usage:
  python3 scripts/score_keep.py DROPPED GROUND_TRUTH.tsv --docs DOCS [--threshold 0.8] [--json]

DROPPED       the dropped documents, one per line, the id first (TAB-separated; further
              columns are ignored): `simhashdb audit --duplicates`, `dedup --duplicates`,
              Python's `duplicates()` written as lines, or a directory of Parquet parts / a
              .parquet file with an `id` column (the Spark job's --duplicates; needs pyarrow).
GROUND_TRUTH  id_a, id_b, jaccard[, inter, union] (TAB-separated): every pair with J >= 0.5
              (../shared/eval/gt_pairs.tsv, or scripts/exact_truth.py's output). With inter
              and union the threshold test is exact.
DOCS          every document of the corpus: JSON Lines with an "id" field, or a file of ids,
              one per line (the first TAB-separated column).

With kept = every document not dropped, at Jaccard >= threshold:
  lost  = dropped documents with no kept document at J >= threshold (unique text thrown away)
  left  = pairs of kept documents at J >= threshold (duplicates left in)
A dropped id that is not in DOCS is an error (the lists are of different corpora).

Standard library only (pyarrow for Parquet input).
"""
import argparse
import json
import os
import sys
from fractions import Fraction


def fail(message):
    print(f"score_keep.py: {message}", file=sys.stderr)
    sys.exit(1)


def read_ids(path):
    """The documents' ids, in file order."""
    ids = []
    try:
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                line = line.rstrip("\n")
                if not line:
                    continue
                if line.startswith("{"):
                    try:
                        ids.append(str(json.loads(line)["id"]))
                    except (ValueError, KeyError) as e:
                        fail(f"{path}:{number}: not a JSON object with an id ({e})")
                else:
                    ids.append(line.split("\t")[0])
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    return ids


def read_dropped(path):
    """The dropped ids (first column, or a Parquet `id` column)."""
    if os.path.isdir(path) or path.endswith(".parquet"):
        try:
            import pyarrow.parquet as pq
        except ImportError:
            fail(f"{path}: reading Parquet needs pyarrow")
        return [str(i) for i in pq.read_table(path, columns=["id"]).column("id").to_pylist()]
    dropped = []
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.rstrip("\n")
                if line and not line.startswith("#"):
                    dropped.append(line.split("\t")[0])
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    return dropped


def true_pairs(path, threshold):
    """Every ground-truth pair at J >= threshold, exactly when inter and union are given."""
    pairs = []
    try:
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                fields = line.split()
                if not fields or fields[0].startswith("#"):
                    continue
                try:
                    if len(fields) >= 5:
                        inter, union = int(fields[3]), int(fields[4])
                        near = inter * threshold.denominator >= threshold.numerator * union
                    else:
                        near = Fraction(fields[2]) >= threshold
                except (ValueError, IndexError):
                    fail(f"{path}:{number}: expected id_a, id_b, jaccard[, inter, union]")
                if near:
                    pairs.append((fields[0], fields[1]))
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    return pairs


def score(documents, dropped, pairs):
    docs = set(documents)
    dropped = set(dropped)
    unknown = sorted(dropped - docs)
    if unknown:
        fail(f"{len(unknown)} dropped ids are not in the corpus (first: {unknown[0]!r})")
    has_kept_partner = set()
    left = 0
    for a, b in pairs:
        if a not in docs or b not in docs:
            continue
        a_kept, b_kept = a not in dropped, b not in dropped
        if a_kept and b_kept:
            left += 1
        if b_kept:
            has_kept_partner.add(a)
        if a_kept:
            has_kept_partner.add(b)
    lost = sum(1 for d in dropped if d not in has_kept_partner)
    return {"documents": len(docs), "dropped": len(dropped), "lost": lost, "left": left}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dropped")
    p.add_argument("truth")
    p.add_argument("--docs", required=True)
    p.add_argument("--threshold", default="0.8")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    try:
        threshold = Fraction(args.threshold)
    except ValueError:
        fail(f"--threshold {args.threshold!r} is not a number")
    if not 0 < threshold <= 1:
        fail(f"--threshold {args.threshold}: expected a number in (0, 1]")
    result = score(read_ids(args.docs), read_dropped(args.dropped),
                   true_pairs(args.truth, threshold))
    result["threshold"] = float(threshold)
    if args.json:
        print(json.dumps(result, sort_keys=True))
    else:
        print(f"documents {result['documents']}  dropped {result['dropped']}  "
              f"lost {result['lost']}  left {result['left']}  (J >= {args.threshold})")


if __name__ == "__main__":
    main()
