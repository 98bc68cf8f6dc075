#!/usr/bin/env python3
"""Bytes per document on disk, side by side for simhashdb builds (docs/benchmarks.md, "Bytes
per document").

usage: scripts/footprint.py N IDS BIN [BIN ...]
  N     documents, inserted as one batch (one run) through `insert` from stdin
  IDS   url (URL-like ids, about 58 bytes: hosts shared by many pages, as a crawl's are)
        or short (10-byte ids, d000000001 ...)
  BIN   a simhashdb binary; each makes its own store with `init --expected-size 1e9`

Prints, per binary, the store's bytes per document (`du --block-size=1` of the directory) and
the block bytes per document of its tables, docs and postings (`stats --json`). The input is
the same for every binary: fingerprints from splitmix64 (seed 42), ids as IDS says.

With SKETCH=N in the environment each binary also makes a store with `--sketch --sketch-bytes
N` from the same documents, each with an N-byte sketch (random bytes, as JSON Lines with a
base64 "sketch" field, what `export --sketch` writes), and the script prints what a sketch
costs a document: the difference of the two stores' `du`, and the sketches' bytes by `stats`.
"""

import base64
import json
import os
import subprocess
import sys
import tempfile

MASK = (1 << 64) - 1


def splitmix(state):
    state = (state + 0x9E3779B97F4A7C15) & MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return state, z ^ (z >> 31)


WORDS = (
    "news sport world business local opinion video live blog story article page archive "
    "product review guide help forum thread post topic music film books travel food health "
    "science tech games photos events jobs homes cars weather politics market economy"
).split()
TLDS = ["com", "org", "net", "de", "co.uk", "fr", "io", "info"]


def url_id(i, rng):
    """A URL of a crawl: one of 20,000 hosts (a few hold most pages), a path of words."""
    rng, a = splitmix(rng)
    rng, b = splitmix(rng)
    # Squaring a uniform draw skews pages towards low host numbers.
    host = int(((a >> 11) / 2**53) ** 2 * 20000)
    name = WORDS[host % len(WORDS)] + WORDS[(host // len(WORDS)) % len(WORDS)] + str(host)
    path = "/".join(WORDS[(b >> (6 * k)) % len(WORDS)] for k in range(1 + b % 3))
    return rng, f"https://www.{name}.{TLDS[host % len(TLDS)]}/{path}/{i:08d}.html"


def write_input(path, n, ids, sketch_bytes=0):
    """TSV of the documents, or with `sketch_bytes`, JSON Lines with a sketch each."""
    rng = 42
    with open(path, "w") as out:
        for i in range(n):
            rng, fp = splitmix(rng)
            if ids == "url":
                rng, doc = url_id(i, rng)
            else:
                doc = f"d{i:09d}"
            if not sketch_bytes:
                out.write(f"{doc}\t{fp:016x}\n")
                continue
            words = []
            for _ in range((sketch_bytes + 7) // 8):
                rng, w = splitmix(rng)
                words.append(w.to_bytes(8, "little"))
            sketch = base64.b64encode(b"".join(words)[:sketch_bytes]).decode()
            out.write(json.dumps({"id": doc, "fingerprint": f"{fp:016x}", "sketch": sketch}) + "\n")


def measure(binary, input_path, work, sketch_bytes=0):
    store = os.path.join(work, "store")
    subprocess.run(["rm", "-rf", store], check=True)
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    init = [binary, "init", store, "--expected-size", "1e9"]
    insert = [binary, "insert", store, "-", "--run-documents", "100000000"]
    if sketch_bytes:
        init += ["--sketch", "--sketch-bytes", str(sketch_bytes)]
        insert += ["--format", "jsonl"]
    subprocess.run(init, check=True, **quiet)
    with open(input_path) as stdin:
        subprocess.run(
            insert,
            stdin=stdin,
            check=True,
            **quiet,
        )
    du = int(subprocess.check_output(["du", "-s", "--block-size=1", store]).split()[0])
    stats = json.loads(subprocess.check_output([binary, "stats", store, "--json"]))
    return du, stats


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    n = int(float(sys.argv[1]))
    ids = sys.argv[2]
    if ids not in ("url", "short"):
        sys.exit("IDS is url or short")
    with tempfile.TemporaryDirectory(dir=os.environ.get("TMPDIR")) as work:
        input_path = os.path.join(work, "input.tsv")
        write_input(input_path, n, ids)
        id_bytes = (os.path.getsize(input_path) / n) - 18  # tab, 16 hex digits, newline
        print(f"{n} documents, {ids} ids of {id_bytes:.1f} bytes on average")
        print("| binary | bytes per document (du) | tables | docs | postings |")
        print("|---|---|---|---|---|")
        for binary in sys.argv[3:]:
            du, stats = measure(binary, input_path, work)
            per = lambda key: stats[key] / n
            tables = sum(t["block_bytes"] for t in stats["per_table"]) / n
            print(
                f"| {binary} | {du / n:.1f} | {tables:.1f} | {per('docs_bytes'):.1f} "
                f"| {per('postings_bytes'):.1f} |"
            )
        sketch_bytes = int(os.environ.get("SKETCH", "0"))
        if sketch_bytes:
            sketched_path = os.path.join(work, "sketched.jsonl")
            write_input(sketched_path, n, ids, sketch_bytes)
            print(f"\nwith {sketch_bytes}-byte sketches:")
            print("| binary | bytes per document (du) | a sketch's cost (du) | sketches (stats) |")
            print("|---|---|---|---|")
            for binary in sys.argv[3:]:
                du, _ = measure(binary, input_path, work)
                sketched, stats = measure(binary, sketched_path, work, sketch_bytes)
                print(
                    f"| {binary} | {sketched / n:.1f} | {(sketched - du) / n:.1f} "
                    f"| {stats['sketches_block_bytes'] / n:.1f} |"
                )


if __name__ == "__main__":
    main()
