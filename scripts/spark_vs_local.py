"""The Spark audit on a local standalone cluster against `simhashdb audit`, on the same
fingerprints, and fingerprinting throughput per core, Spark executors against the CLI.

    target/python-venv/bin/python scripts/spark_vs_local.py --documents 1000000 [--workers 2]
    target/python-venv/bin/python scripts/spark_vs_local.py --texts 200000

Fingerprints: random, a tenth with a near duplicate (1 to 3 bits flipped), one in a hundred
copied, and 2,000 copies of one page. Prints the seconds of each side and checks that both
found the same pairs. Needs the CLI's release build, pyspark and pyarrow (python/test.sh's venv).
"""

from __future__ import annotations

import argparse
import os
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
    pq.write_table(pa.table({"id": ids, "fingerprint": base.view(np.int64)}), path)


def texts(n: int, path: Path) -> None:
    rng = np.random.default_rng(5)
    words = np.array([f"w{i}" for i in range(50000)])
    body = [" ".join(words[rng.integers(0, len(words), 300)]) for _ in range(n)]
    pq.write_table(pa.table({"id": [f"t{i}" for i in range(n)], "text": body}), path)


def pair_set(path: Path) -> set:
    t = pq.read_table(path, columns=["id_a", "id_b", "distance"])
    return set(zip(*(t.column(c).to_pylist() for c in ("id_a", "id_b", "distance"))))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--documents", type=int, help="audit this many fingerprints both ways")
    p.add_argument("--texts", type=int, help="fingerprint this many texts both ways")
    p.add_argument("--workers", type=int, default=2, help="one-core workers")
    p.add_argument("--memory", default="4g", help="per worker and executor")
    p.add_argument("--distance", type=int, default=3)
    p.add_argument("--dir", type=Path, help="work directory (default: a temporary one)")
    args = p.parse_args()
    work = args.dir or Path(tempfile.mkdtemp(prefix="spark-vs-local-"))
    work.mkdir(parents=True, exist_ok=True)
    conf = ["--conf", f"spark.executor.memory={args.memory}",
            "--conf", "spark.driver.memory=4g",
            "--conf", f"spark.sql.shuffle.partitions={max(8, args.workers * 4)}"]
    with standalone_cluster(work / "cluster", workers=args.workers, memory=args.memory) as cluster:
        if args.documents:
            n = args.documents
            data = work / f"fp{n}.parquet"
            fingerprints(n, data)
            store = work / f"store{n}"
            subprocess.run(["rm", "-rf", str(store)])
            timed([CLI, "init", str(store), "--expected-size", str(n),
                   "--distance", str(args.distance)])
            insert = timed([CLI, "insert", str(store), str(data)])
            local = timed([CLI, "audit", str(store), "--pairs", str(work / "local.parquet")])
            out = work / "spark-pairs"
            subprocess.run(["rm", "-rf", str(out)])
            started = time.monotonic()
            done = run_job(cluster, "audit", "--input", str(data), "--output", str(out),
                           "--distance", str(args.distance), *conf)
            spark = time.monotonic() - started
            if done.returncode != 0:
                sys.exit(done.stderr[-4000:])
            a, b = pair_set(work / "local.parquet"), pair_set(out)
            print(f"audit {n} fingerprints, distance {args.distance}: {len(a)} pairs; "
                  f"local insert {insert:.1f} s, local audit {local:.1f} s, "
                  f"spark audit ({args.workers} x 1 core) {spark:.1f} s; "
                  f"same pairs: {a == b}", flush=True)
        if args.texts:
            n = args.texts
            data = work / f"texts{n}.parquet"
            texts(n, data)
            cli = timed([CLI, "fingerprint", str(data), "--output", str(work / "cli-fp.parquet")])
            cores = os.cpu_count() or 1
            print(f"fingerprint {n} texts of 300 words: CLI {cli:.1f} s on {cores} cores "
                  f"({n / cli / cores:,.0f} docs/s per core)", flush=True)
            for way, extra in (("arrow batches", []), ("pickled rows", ["--no-arrow"])):
                out = work / "spark-fp"
                subprocess.run(["rm", "-rf", str(out)])
                started = time.monotonic()
                done = run_job(cluster, "fingerprint", "--input", str(data), "--output",
                               str(out), *extra, *conf)
                spark = time.monotonic() - started
                if done.returncode != 0:
                    sys.exit(done.stderr[-4000:])
                print(f"  spark, {way}: {spark:.1f} s on {args.workers} executor cores "
                      f"({n / spark / args.workers:,.0f} docs/s per core, job start included)",
                      flush=True)


if __name__ == "__main__":
    main()
