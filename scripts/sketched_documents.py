#!/usr/bin/env python3
"""Documents with verification sketches, for the benchmarks of a store with sketches
(scripts/sketch_costs.sh, scripts/sketch_store_ab.sh).

usage: scripts/sketched_documents.py N DOCS.jsonl [QUERIES.txt]

Writes N documents as JSON Lines (id, fingerprint, a base64 128-byte sketch: what `export
--sketch` writes): the first 2,000 copies of one page (all-zero sketch), then a tenth near
copies of an earlier document (a bit of the fingerprint and a bit of the sketch flipped), 1%
exact copies, the rest random. With QUERIES, also 10,000 query fingerprints, one per line:
half a bit from a stored one, half random. Seeded: the same files every time.
"""

import base64
import json
import random
import sys


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    n, rng = int(float(sys.argv[1])), random.Random(7)
    made = []
    with open(sys.argv[2], "w") as out:
        for i in range(n):
            r = rng.random()
            if i < 2000:
                fp, sk = 0x0123456789ABCDEF, bytes(128)
            elif made and r < 0.10:
                fp, sk = rng.choice(made)
                fp ^= 1 << rng.randrange(64)
                sk = bytearray(sk)
                sk[rng.randrange(128)] ^= 1 << rng.randrange(8)
                sk = bytes(sk)
            elif made and r < 0.11:
                fp, sk = rng.choice(made)
            else:
                fp, sk = rng.getrandbits(64), rng.randbytes(128)
            if len(made) < 100000:
                made.append((fp, sk))
            out.write(json.dumps({"id": f"doc-{i:08d}", "fingerprint": f"{fp:016x}",
                                  "sketch": base64.b64encode(sk).decode()}) + "\n")
    if len(sys.argv) == 4:
        with open(sys.argv[3], "w") as out:
            for i in range(10000):
                if i % 2 == 0:
                    fp = rng.choice(made)[0] ^ (1 << rng.randrange(64))
                else:
                    fp = rng.getrandbits(64)
                out.write(f"{fp:016x}\n")


if __name__ == "__main__":
    main()
