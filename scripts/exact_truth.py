#!/usr/bin/env python3
"""Exact near-duplicate ground truth for a JSON Lines corpus, independent of simhashdb:
every pair with word 3-shingle Jaccard >= 0.5, in ../shared/eval's gt_pairs.tsv format.

    scripts/exact_truth.py CORPUS.jsonl GT_PAIRS.tsv [--check N]

Definitions as ../shared/eval/README.md: tokens are re.findall(r"[^\\W_]+", text.lower()),
shingles the set of word 3-grams joined by one space (a text of fewer than 3 tokens is one
shingle of them all), J = |A & B| / |A | B| over the shingle strings. Candidates come from a
prefix filter (shingles ordered by document frequency; two sets with J >= t share one of
their first |x| - ceil(t |x|) + 1), each verified with Python sets. --check N compares N
documents against all others by brute force and fails on any difference.
"""
import json
import math
import random
import sys
from collections import defaultdict
import re

T = 0.5


def shingles(text):
    tokens = re.findall(r"[^\W_]+", text.lower())
    if len(tokens) < 3:
        return {" ".join(tokens)}
    return {" ".join(tokens[i:i + 3]) for i in range(len(tokens) - 2)}


def main():
    corpus, out = sys.argv[1], sys.argv[2]
    check = int(sys.argv[sys.argv.index("--check") + 1]) if "--check" in sys.argv else 0
    ids, sets = [], []
    with open(corpus) as f:
        for line in f:
            if line.strip():
                doc = json.loads(line)
                ids.append(doc["id"])
                sets.append(frozenset(shingles(doc["text"])))
    df = defaultdict(int)
    for s in sets:
        for x in s:
            df[x] += 1
    order = sorted(range(len(sets)), key=lambda i: (len(sets[i]), i))
    index = defaultdict(list)
    pairs = {}
    for i in order:
        s = sets[i]
        ranked = sorted(s, key=lambda x: (df[x], x))
        prefix = ranked[:len(s) - math.ceil(T * len(s) - 1e-9) + 1]
        seen = set()
        for x in prefix:
            for j in index[x]:
                if j in seen or len(sets[j]) < T * len(s) - 1e-9:
                    continue
                seen.add(j)
                inter = len(s & sets[j])
                union = len(s) + len(sets[j]) - inter
                if inter >= T * union:
                    a, b = sorted((ids[i], ids[j]))
                    pairs[(a, b)] = (inter, union)
            index[x].append(i)
    with open(out, "w") as f:
        for (a, b), (inter, union) in sorted(pairs.items()):
            f.write(f"{a}\t{b}\t{inter / union:.6f}\t{inter}\t{union}\n")
    print(f"{len(ids)} documents, {len(pairs)} pairs at J >= {T}, "
          f"{sum(1 for i, u in pairs.values() if i >= 0.8 * u)} at J >= 0.8")
    if check:
        rng = random.Random(1)
        for i in rng.sample(range(len(ids)), min(check, len(ids))):
            for j in range(len(ids)):
                if i == j:
                    continue
                inter = len(sets[i] & sets[j])
                union = len(sets[i]) + len(sets[j]) - inter
                a, b = sorted((ids[i], ids[j]))
                if (inter >= T * union) != ((a, b) in pairs):
                    sys.exit(f"brute force differs on {a} {b}: {inter}/{union}")
        print(f"checked {check} documents against all others by brute force: no difference")


if __name__ == "__main__":
    main()
