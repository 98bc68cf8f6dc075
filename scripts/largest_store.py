"""The largest store this machine holds, measured (docs/benchmarks.md, "8e8").

Loads BATCHES batches of BATCH documents with 12-byte ids into a new store, each generated
here and piped to `simhashdb insert STORE -` (no input file), then measures what a user of
such a store does: single queries warm and cold (through the Python package: redb, not
pinned), a batch of 10,000 queries (the CLI), a daily `dedup --insert` of DAILY documents, and
the audit (pairs and the keep rule's duplicates) with its peak memory. A full compaction is
run only when the disk has the store's size free beside it; otherwise the script says so.

Each batch: random fingerprints, one document in a hundred 1 to 3 bits from the one before,
and one page copied 1,000 times (ids distinct). Queries: half 1 to 3 bits from a stored
fingerprint (a sample of 2,000 per batch kept while generating), half random.

    target/python-venv/bin/python scripts/largest_store.py BIN DIR [--batches 5] [--batch 1e8]
        [--daily 1e6] [--merge-factor 8] [--steps load,queries,dedup,audit,compact]
        [--from-batch B]    (continue a load into DIR with batches B.., then the other steps)

`--merge-factor 8` keeps each batch one run without merging earlier batches' runs: with the
default 4, the fourth 1e8 batch merges four runs of 1e8, which needs their size free beside
the store. Prints one JSON object per figure (also appended to DIR.figures.jsonl).
"""

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

COPIES_OF_ONE_PAGE = 1_000
SAMPLE_PER_BATCH = 2_000


def emit(figures_path, figure):
    line = json.dumps(figure)
    print(line, flush=True)
    with open(figures_path, "a") as f:
        f.write(line + "\n")


def flip(fp, rng):
    for _ in range(rng.randint(1, 3)):
        fp ^= 1 << rng.randrange(64)
    return fp


def batch_lines(b, n, sample):
    """Yields chunks of TSV lines of batch b (ids `BBdddddddddd`: 12 bytes)."""
    rng = random.Random(1000 + b)
    page = rng.getrandbits(64)
    copy_every = max(1, n // COPIES_OF_ONE_PAGE)
    sample_every = max(1, n // SAMPLE_PER_BATCH)
    chunk = 100_000
    previous = rng.getrandbits(64)
    for start in range(0, n, chunk):
        lines = []
        for i in range(start, min(n, start + chunk)):
            if i % copy_every == 0:
                fp = page
            elif i % 100 == 51:
                fp = flip(previous, rng)
            else:
                fp = rng.getrandbits(64)
            previous = fp
            if i % sample_every == 7:
                sample.append(fp)
            lines.append(f"{b:02d}{i:010d}\t{fp:016x}\n")
        yield "".join(lines).encode()


def timed(cmd, stdin=None, feed=None, stdout=subprocess.DEVNULL):
    """Runs cmd under /usr/bin/time; returns (wall s, peak MiB, stdout text or None)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as t:
        full = ["/usr/bin/time", "-f", "%e %M", "-o", t.name] + cmd
        start = time.perf_counter()
        p = subprocess.Popen(full, stdin=subprocess.PIPE if feed else stdin, stdout=stdout)
        if feed:
            for part in feed:
                p.stdin.write(part)
            p.stdin.close()
        out = p.stdout.read().decode() if stdout == subprocess.PIPE else None
        p.wait()
        wall = time.perf_counter() - start
        if p.returncode != 0:
            sys.exit(f"{' '.join(cmd)} exited {p.returncode}")
        _, peak_kib = t.read().split()[-2:]
        return wall, int(peak_kib) / 1024, out


def du(path):
    return int(subprocess.check_output(["du", "-s", "--block-size=1", path]).split()[0])


def free_bytes(path):
    s = os.statvfs(path)
    return s.f_bavail * s.f_frsize


def evict(path):
    """Drops the store's files from the page cache (clean pages; no root needed)."""
    for root, _, files in os.walk(path):
        for name in files:
            fd = os.open(os.path.join(root, name), os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


def percentile(sorted_values, p):
    return sorted_values[round((len(sorted_values) - 1) * p)]


def single_queries(store_dir, queries, cold):
    """p50 and p99 of single queries in a fresh process (warm: after one pass over them)."""
    code = f"""
import json, sys, time, simhashdb
queries = json.load(open(sys.argv[1]))
store = simhashdb.Store.open(sys.argv[2])
if not {cold}:
    for q in queries:
        store.query(q)
lat, matches = [], 0
for q in queries:
    t = time.perf_counter()
    matches += len(store.query(q))
    lat.append((time.perf_counter() - t) * 1e6)
print(json.dumps({{"lat": sorted(lat), "matches": matches}}))
"""
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        json.dump(queries, f)
        f.flush()
        out = subprocess.check_output([sys.executable, "-c", code, f.name, store_dir])
    r = json.loads(out)
    return percentile(r["lat"], 0.5), percentile(r["lat"], 0.99), r["matches"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin")
    ap.add_argument("dir")
    ap.add_argument("--batches", type=int, default=5)
    ap.add_argument("--batch", type=float, default=1e8)
    ap.add_argument("--daily", type=float, default=1e6)
    ap.add_argument("--merge-factor", type=int, default=8)
    ap.add_argument("--from-batch", type=int, default=0,
                    help="continue a load: batches FROM..BATCHES into the existing store")
    ap.add_argument("--steps", default="load,queries,dedup,audit,compact")
    a = ap.parse_args()
    steps = set(a.steps.split(","))
    n = int(a.batch)
    store = a.dir
    figures = store.rstrip("/") + ".figures.jsonl"
    sample_path = store.rstrip("/") + ".sample.json"

    if "load" in steps:
        if a.from_batch == 0:
            if os.path.exists(store):
                sys.exit(f"{store} exists: the load makes a new store (or give --from-batch)")
            subprocess.run([a.bin, "init", store, "--expected-size", "1e9",
                            "--merge-factor", str(a.merge_factor)], check=True,
                           stdout=subprocess.DEVNULL)
            sample = []
        else:
            sample = json.load(open(sample_path))
        total = 0.0
        for b in range(a.from_batch, a.batches):
            wall, peak, _ = timed([a.bin, "insert", store, "-", "--label", f"batch{b}"],
                                  feed=batch_lines(b, n, sample))
            total += wall
            stats = json.loads(subprocess.check_output([a.bin, "stats", store, "--json"]))
            emit(figures, {"figure": "load_batch", "batch": b, "documents": n,
                           "seconds": round(wall, 1), "peak_mib": round(peak),
                           "store_documents": stats["documents"], "runs": stats["runs"],
                           "du_bytes": du(store), "free_bytes": free_bytes(store)})
        with open(sample_path, "w") as f:
            json.dump(sample, f)
        stats = json.loads(subprocess.check_output([a.bin, "stats", store, "--json"]))
        docs = stats["documents"]
        emit(figures, {"figure": "load", "documents": docs, "seconds": round(total, 1),
                       "documents_per_s": round(n * (a.batches - a.from_batch) / total),
                       "du_bytes_per_document": round(du(store) / docs, 1),
                       "stats": {k: v for k, v in stats.items() if not isinstance(v, (list, dict))}})

    sample = json.load(open(sample_path))
    rng = random.Random(7)
    queries = [flip(rng.choice(sample), rng) if i % 2 == 0 else rng.getrandbits(64)
               for i in range(10_000)]

    if "queries" in steps:
        evict(store)
        p50, p99, m = single_queries(store, queries[:1000], cold=True)
        emit(figures, {"figure": "single_query_cold", "queries": 1000, "p50_us": round(p50, 1),
                       "p99_us": round(p99, 1), "matches": m})
        p50, p99, m = single_queries(store, queries, cold=False)
        emit(figures, {"figure": "single_query_warm", "queries": len(queries),
                       "p50_us": round(p50, 1), "p99_us": round(p99, 1), "matches": m})
        qfile = store.rstrip("/") + ".queries.txt"
        with open(qfile, "w") as f:
            f.writelines(f"{q:016x}\n" for q in queries)
        walls = []
        for _ in range(3):
            wall, peak, _ = timed([a.bin, "query", store, "--input", qfile])
            walls.append(wall)
        emit(figures, {"figure": "batch_queries_cli", "queries": len(queries),
                       "seconds_median": round(sorted(walls)[1], 2), "peak_mib": round(peak)})

    if "dedup" in steps:
        d = int(a.daily)

        def day():
            r = random.Random(99)
            lines = []
            for i in range(d):
                x = r.random()
                if x < 0.1:
                    fp = flip(r.choice(sample), r)
                elif x < 0.11:
                    fp = r.choice(sample)
                else:
                    fp = r.getrandbits(64)
                lines.append(f"day{i:09d}\t{fp:016x}\n")
                if len(lines) == 100_000:
                    yield "".join(lines).encode()
                    lines = []
            yield "".join(lines).encode()

        kept = store.rstrip("/") + ".kept.tsv"
        wall, peak, out = timed([a.bin, "dedup", store, "-", "--insert", "--output", kept,
                                 "--label", "daily", "--json"], feed=day(), stdout=subprocess.PIPE)
        summary = json.loads(out)
        emit(figures, {"figure": "daily_dedup_insert", "documents": d, "seconds": round(wall, 1),
                       "peak_mib": round(peak), "kept": summary["kept"],
                       "duplicates_of_stored": summary["duplicates_of_stored"],
                       "duplicates_within_input": summary["duplicates_within_input"]})
        os.remove(kept)

    if "audit" in steps:
        pairs = store.rstrip("/") + ".pairs.tsv"
        drops = store.rstrip("/") + ".duplicates.tsv"
        wall, peak, _ = timed([a.bin, "audit", store, "--pairs", pairs, "--duplicates", drops])
        lines = lambda p: int(subprocess.check_output(["wc", "-l", p]).split()[0])
        emit(figures, {"figure": "audit", "seconds": round(wall, 1), "peak_mib": round(peak),
                       "pairs": lines(pairs), "duplicates": lines(drops)})
        os.remove(pairs)
        os.remove(drops)

    if "compact" in steps:
        size, free = du(store), free_bytes(store)
        if free < size:
            emit(figures, {"figure": "compaction", "skipped": "not enough free disk",
                           "store_bytes": size, "free_bytes": free})
        else:
            wall, peak, _ = timed([a.bin, "compact", store])
            emit(figures, {"figure": "compaction", "seconds": round(wall, 1),
                           "peak_mib": round(peak), "du_bytes": du(store)})


if __name__ == "__main__":
    main()
