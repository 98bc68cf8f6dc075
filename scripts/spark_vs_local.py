"""The Spark jobs on a local standalone cluster against the CLI, side by side on the same data:
the audit and dedup of fingerprints against `simhashdb insert` + `audit`, and fingerprinting
throughput per core.

    target/python-venv/bin/python scripts/spark_vs_local.py --documents 10000000 [--runs 3]
    target/python-venv/bin/python scripts/spark_vs_local.py --texts 1000000 [--runs 3]
    target/python-venv/bin/python scripts/spark_vs_local.py --documents 10000000 --against 1000000

With --against, a day of new fingerprints (--against of them) is deduplicated against the
--documents as a reference: the Spark `dedup --against` job against the CLI's `dedup` of the
day into a store holding the reference (a fresh copy each run), the same duplicates checked.

Fingerprints: random, a tenth with a near duplicate (1 to 3 bits flipped), one in a hundred
copied, and 2,000 copies of one page. Each run times the CLI's insert + audit --pairs, the
Spark audit job, the CLI's audit --duplicates and the Spark dedup job, and checks that both
sides found the same pairs and the same duplicates; medians are printed last.

Texts: 300 random words each. The CLI fingerprints them on every core; the Spark job runs on
one-core executors whose native code is held to one thread (RAYON_NUM_THREADS=1), on the texts
and on 1,000 of them: the difference is the marginal time, the job's fixed start taken off.
Needs the CLI's release build, pyspark and pyarrow (python/test.sh's venv).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python" / "tests"))
from spark_cluster import run_job, standalone_cluster  # noqa: E402

CLI = str(ROOT / "target" / "release" / "simhashdb")


def timed(command, **kw) -> float:
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, **kw)
    if done.returncode != 0:
        sys.exit(f"{' '.join(map(str, command))} failed:\n{done.stderr[-4000:]}")
    return time.monotonic() - started


def fingerprints(n: int, path: Path) -> None:
    rng = np.random.default_rng(11)
    base = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    near = rng.choice(n, n // 10, replace=False)
    for k in (1, 2, 3):
        part = near[k - 1 :: 3]
        flips = np.zeros(len(part), dtype=np.uint64)
        for _ in range(k):
            flips ^= np.left_shift(np.uint64(1), rng.integers(0, 64, len(part)).astype(np.uint64))
        base[part] = base[part - 1] ^ flips
    copies = rng.choice(n, n // 100, replace=False)
    base[copies] = base[copies - 1]
    base[:2000] = base[0]
    ids = pa.array([f"d{i:09d}" for i in range(n)])
    pq.write_table(pa.table({"id": ids, "fingerprint": base.view(np.int64)}), path,
                   row_group_size=1 << 20)


def day_against(reference: Path, new: int, path: Path) -> None:
    """A day of ``new`` documents against the reference's fingerprints: 20% copies of a
    reference document, 10% within 1 to 3 bits of one, 10% copies or 1-bit copies of an
    earlier document of the day, 60% new; ids sorted (the order both sides take them)."""
    rng = np.random.default_rng(17)
    ref = pq.read_table(reference, columns=["fingerprint"]).column("fingerprint").to_numpy()
    ref = ref.view(np.uint64)
    fps = rng.integers(0, 2**64, size=new, dtype=np.uint64)
    kind = rng.random(new)
    copied = kind < 0.2
    fps[copied] = ref[rng.integers(0, len(ref), copied.sum())]
    near = (kind >= 0.2) & (kind < 0.3)
    flips = np.zeros(near.sum(), dtype=np.uint64)
    for k in range(3):
        bit = rng.integers(0, 64, len(flips)).astype(np.uint64)
        flips ^= np.where(rng.random(len(flips)) < [1, 0.6, 0.3][k],
                          np.left_shift(np.uint64(1), bit), np.uint64(0))
    fps[near] = ref[rng.integers(0, len(ref), near.sum())] ^ flips
    earlier = np.flatnonzero((kind >= 0.3) & (kind < 0.4))
    earlier = earlier[earlier > 0]
    source = (rng.random(len(earlier)) * earlier).astype(np.int64)
    one_bit = np.left_shift(np.uint64(1), rng.integers(0, 64, len(earlier)).astype(np.uint64))
    fps[earlier] = fps[source] ^ np.where(rng.random(len(earlier)) < 0.5, one_bit, np.uint64(0))
    ids = pa.array([f"n{i:09d}" for i in range(new)])
    pq.write_table(pa.table({"id": ids, "fingerprint": fps.view(np.int64)}), path,
                   row_group_size=1 << 20)


def texts(n: int, path: Path) -> None:
    rng = np.random.default_rng(5)
    words = np.array([f"w{i}" for i in range(50000)])
    body = [" ".join(words[rng.integers(0, len(words), 300)]) for _ in range(n)]
    # Row groups of ~100 MB, as Spark writes them (parquet.block.size 128 MiB): a reader
    # splits a file by row group, so one 2 GB group would be one task.
    pq.write_table(pa.table({"id": [f"t{i}" for i in range(n)], "text": body}), path,
                   row_group_size=50_000)


def pair_set(path: Path) -> set:
    t = pq.read_table(path, columns=["id_a", "id_b", "distance"])
    return set(zip(*(t.column(c).to_pylist() for c in ("id_a", "id_b", "distance"))))


def duplicates_of(path: Path) -> dict:
    if path.is_dir():
        t = pq.read_table(path, columns=["id", "kept_id"])
        return dict(zip(t.column("id").to_pylist(), t.column("kept_id").to_pylist()))
    return dict(line.split("\t")[:2] for line in path.read_text().splitlines())


def job(cluster, *args) -> float:
    started = time.monotonic()
    done = run_job(cluster, *args)
    if done.returncode != 0:
        sys.exit(done.stderr[-4000:])
    return time.monotonic() - started


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--documents", type=int, help="audit and dedup this many fingerprints both ways")
    p.add_argument("--texts", type=int, help="fingerprint this many texts both ways")
    p.add_argument("--against", type=int, metavar="NEW",
                   help="dedup NEW fingerprints against a reference of --documents: the Spark "
                   "dedup --against job, the CLI's dedup into a store of the reference")
    p.add_argument("--runs", type=int, default=1, help="runs of each, medians printed last")
    p.add_argument("--workers", type=int, default=2, help="one-core workers")
    p.add_argument("--memory", default="4g", help="per worker and executor")
    p.add_argument("--distance", type=int, default=3)
    p.add_argument("--dir", type=Path, help="work directory (default: a temporary one)")
    args = p.parse_args()
    work = args.dir or Path(tempfile.mkdtemp(prefix="spark-vs-local-"))
    work.mkdir(parents=True, exist_ok=True)
    conf = ["--conf", f"spark.executor.memory={args.memory}",
            "--conf", "spark.driver.memory=4g",
            "--conf", "spark.executorEnv.RAYON_NUM_THREADS=1",
            "--conf", f"spark.sql.shuffle.partitions={max(8, args.workers * 4)}"]
    times: dict = {}

    def note(name: str, seconds: float) -> None:
        times.setdefault(name, []).append(seconds)

    with standalone_cluster(work / "cluster", workers=args.workers, memory=args.memory) as cluster:
        if args.against:
            n, m = args.documents, args.against
            data, day = work / f"fp{n}.parquet", work / f"day{m}-of-{n}.parquet"
            if not data.exists():
                fingerprints(n, data)
            if not day.exists():
                day_against(data, m, day)
            store = work / f"reference{n}"
            if not store.exists():
                timed([CLI, "init", str(store), "--expected-size", str(n),
                       "--distance", str(args.distance)])
                timed([CLI, "insert", str(store), str(data)])
            for run in range(args.runs):
                copy = work / "reference-copy"
                subprocess.run(["rm", "-rf", str(copy)])
                subprocess.run(["cp", "-r", str(store), str(copy)], check=True)
                local_dups = work / "local-day-dups.tsv"
                local = timed([CLI, "dedup", str(copy), str(day), "--output",
                               str(work / "local-kept.parquet"), "--duplicates", str(local_dups)])
                kept, dups = work / "spark-day-kept", work / "spark-day-dups"
                subprocess.run(["rm", "-rf", str(kept), str(dups)])
                spark = job(cluster, "dedup", "--input", str(day), "--against", str(data),
                            "--output", str(kept), "--duplicates", str(dups),
                            "--distance", str(args.distance), *conf)
                same = duplicates_of(local_dups) == duplicates_of(dups)
                note("cli dedup", local)
                note("spark dedup --against", spark)
                print(f"run {run + 1}: {m} new against {n}: CLI dedup into the store "
                      f"{local:.1f} s; spark dedup --against {spark:.1f} s (same duplicates: "
                      f"{same}, {len(duplicates_of(dups))}); {args.workers} x 1 core", flush=True)
                if not same:
                    sys.exit("the answers differ")
            cli, spark = (statistics.median(times[k]) for k in ("cli dedup", "spark dedup --against"))
            print(f"medians of {args.runs}: CLI dedup {cli:.1f} s, spark dedup --against "
                  f"{spark:.1f} s: ratio {spark / cli:.2f}", flush=True)
        elif args.documents:
            n = args.documents
            data = work / f"fp{n}.parquet"
            if not data.exists():
                fingerprints(n, data)
            for run in range(args.runs):
                store = work / f"store{n}"
                subprocess.run(["rm", "-rf", str(store)])
                timed([CLI, "init", str(store), "--expected-size", str(n),
                       "--distance", str(args.distance)])
                insert = timed([CLI, "insert", str(store), str(data)])
                local = timed([CLI, "audit", str(store), "--pairs", str(work / "local.parquet")])
                local_dups = timed([CLI, "audit", str(store), "--duplicates",
                                    str(work / "local-dups.tsv")])
                out, kept, dups = work / "spark-pairs", work / "spark-kept", work / "spark-dups"
                subprocess.run(["rm", "-rf", str(out), str(kept), str(dups)])
                spark = job(cluster, "audit", "--input", str(data), "--output", str(out),
                            "--distance", str(args.distance), *conf)
                dedup = job(cluster, "dedup", "--input", str(data), "--output", str(kept),
                            "--duplicates", str(dups), "--distance", str(args.distance), *conf)
                same_pairs = pair_set(work / "local.parquet") == pair_set(out)
                same_dups = duplicates_of(work / "local-dups.tsv") == duplicates_of(dups)
                note("insert", insert)
                note("insert + audit", insert + local)
                note("insert + audit --duplicates", insert + local_dups)
                note("spark audit", spark)
                note("spark dedup", dedup)
                print(f"run {run + 1}: {n} fingerprints, distance {args.distance}: local insert "
                      f"{insert:.1f} s, audit {local:.1f} s, audit --duplicates {local_dups:.1f} "
                      f"s; spark audit {spark:.1f} s (same pairs: {same_pairs}), spark dedup "
                      f"{dedup:.1f} s (same duplicates: {same_dups}); "
                      f"{args.workers} x 1 core", flush=True)
                if not (same_pairs and same_dups):
                    sys.exit("the answers differ")
            median = {k: statistics.median(v) for k, v in times.items()}
            print(f"medians of {args.runs}: " + ", ".join(f"{k} {v:.1f} s" for k, v in median.items()))
            print(f"ratios: spark audit / (insert + audit) "
                  f"{median['spark audit'] / median['insert + audit']:.2f}, spark dedup / "
                  f"(insert + audit --duplicates) "
                  f"{median['spark dedup'] / median['insert + audit --duplicates']:.2f}",
                  flush=True)
        if args.texts:
            n = args.texts
            data, small = work / f"texts{n}.parquet", work / "texts1000.parquet"
            if not data.exists():
                texts(n, data)
            if not small.exists():
                pq.write_table(pq.read_table(data).slice(0, 1000), small)
            cores = os.cpu_count() or 1
            for run in range(args.runs):
                cli = timed([CLI, "fingerprint", str(data), "--output", str(work / "cli-fp.parquet")])
                out = work / "spark-fp"
                subprocess.run(["rm", "-rf", str(out)])
                whole = job(cluster, "fingerprint", "--input", str(data), "--output", str(out), *conf)
                subprocess.run(["rm", "-rf", str(out)])
                start = job(cluster, "fingerprint", "--input", str(small), "--output", str(out), *conf)
                note("cli", cli)
                note("spark", whole)
                note("spark 1000", start)
                print(f"run {run + 1}: fingerprint {n} texts of 300 words: CLI {cli:.1f} s on {cores} "
                      f"cores; spark {whole:.1f} s, of 1,000 texts {start:.1f} s, on "
                      f"{args.workers} one-core executors", flush=True)
            cli, whole, start = (statistics.median(times[k]) for k in ("cli", "spark", "spark 1000"))
            per_core_cli = n / cli / cores
            per_core_spark = (n - 1000) / (whole - start) / args.workers
            print(f"medians of {args.runs}: CLI {per_core_cli:,.0f} docs/s per core; spark "
                  f"{per_core_spark:,.0f} docs/s per executor core, marginal ({whole:.1f} - "
                  f"{start:.1f} s); ratio {per_core_spark / per_core_cli:.2f}; whole job "
                  f"{n / whole / args.workers:,.0f} docs/s per core", flush=True)


if __name__ == "__main__":
    main()
