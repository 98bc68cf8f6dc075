#!/usr/bin/env python3
"""A corpus of N documents for timing `tune` at scale, grown from real ones: the documents of
the given JSON Lines corpora, then copies of them with 0-20% of their words replaced by other
words of the same document (so every copy is a near- or far-duplicate of its source).

    scripts/grow_corpus.py N OUT.jsonl CORPUS.jsonl...
"""
import json
import random
import sys


def main():
    n, out, sources = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    docs = []
    for path in sources:
        with open(path) as f:
            docs += [json.loads(line) for line in f if line.strip()]
    rng = random.Random(1)
    with open(out, "w") as f:
        for i in range(n):
            doc = docs[i % len(docs)]
            text = doc["text"]
            if i >= len(docs):
                words = text.split()
                for _ in range(int(len(words) * rng.uniform(0, 0.2))):
                    words[rng.randrange(len(words))] = rng.choice(words)
                text = " ".join(words)
            f.write(json.dumps({"id": f"{i:06d}:{doc['id']}", "text": text}) + "\n")


if __name__ == "__main__":
    main()
