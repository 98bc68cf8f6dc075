"""The Spark jobs on a real standalone cluster (a master and two workers, each its own process,
on loopback), checked against the CLI on the same data: fingerprints, audit pairs, clusters."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Set, Tuple

import pytest

from conftest import run_cli

if os.environ.get("SIMHASHDB_REQUIRE_SPARK"):
    import pyarrow as pa
    import pyarrow.parquet as pq
    import pyspark  # noqa: F401
else:
    pytest.importorskip("pyspark")
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")

from simhashdb.spark import tables  # noqa: E402
from spark_cluster import ClusterError, run_job, standalone_cluster  # noqa: E402


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """spark://127.0.0.1:PORT with two one-core workers, stopped at the end (also on failure)."""
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.fail("Spark needs Java 17 or later (java on PATH or JAVA_HOME)")
    try:
        with standalone_cluster(tmp_path_factory.mktemp("spark")) as cluster:
            yield cluster
    except ClusterError as e:
        pytest.fail(str(e))


def job(cluster, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """Runs `python -m simhashdb.spark ARGS` as a driver against the cluster."""
    done = run_job(cluster, *args, "--conf", "spark.executor.memory=1g",
                   "--conf", "spark.sql.shuffle.partitions=8", timeout=900)
    if check and done.returncode != 0:
        pytest.fail(f"{' '.join(args)} failed ({done.returncode}):\n{done.stderr[-5000:]}")
    return done


def corpus(path: Path, documents: int, seed: int = 7) -> None:
    """Documents (id, text): random texts, a fifth with a near duplicate (one word changed),
    a seventh with an exact copy, and 600 copies of one boilerplate page (a hot bucket)."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(20000)]
    ids, texts = [], []

    def add(text: str) -> None:
        ids.append(f"d{len(ids):06d}")
        texts.append(text)

    while len(ids) < documents - 600:
        text = [rng.choice(words) for _ in range(40)]
        add(" ".join(text))
        if rng.random() < 0.2:
            changed = list(text)
            changed[rng.randrange(len(changed))] = rng.choice(words)
            add(" ".join(changed))
        if rng.random() < 1 / 7:
            add(" ".join(text))
    for _ in range(600):
        add("accept cookies to continue reading this page privacy policy terms of use")
    pq.write_table(pa.table({"id": ids, "text": texts}), path)


def read_rows(path: Path) -> List[Dict]:
    return pq.read_table(path).to_pylist()


def pair_set(rows: List[Dict]) -> Set[Tuple[str, str, int]]:
    pairs = {(r["id_a"], r["id_b"], r["distance"]) for r in rows}
    assert len(pairs) == len(rows), "each pair once"
    return pairs


def partition(rows: List[Dict]) -> Set[frozenset]:
    groups: Dict = {}
    for r in rows:
        groups.setdefault(r["cluster_id"], set()).add(r["id"])
    return {frozenset(g) for g in groups.values()}


def test_the_table_owning_a_pair_is_unique():
    rng = random.Random(3)
    for blocks, distance in [(4, 3), (5, 3), (6, 3), (7, 2), (9, 5)]:
        combos = tables.tables(blocks, distance)
        for _ in range(3000):
            a = rng.getrandbits(64)
            b = a
            for bit in rng.sample(range(64), rng.randint(0, distance)):
                b ^= 1 << bit
            x = a ^ b
            owners = [
                t for t, c in enumerate(combos)
                if x & tables.key_mask(blocks, c) == 0
                and all(x & m for m in tables.skipped_masks(blocks, c))
            ]
            assert len(owners) == 1, (blocks, distance, hex(x), owners)
    assert tables.unsigned(tables.signed(0xFEDC_BA98_7654_3210)) == 0xFEDC_BA98_7654_3210
    assert tables.signed(0xFEDC_BA98_7654_3210) == -81985529216486896


def test_fingerprint_audit_and_clusters_equal_the_cli(cluster, cli, tmp_path):
    docs = tmp_path / "docs.parquet"
    corpus(docs, 100_000)
    fps = tmp_path / "fingerprints"
    job(cluster, "fingerprint", "--input", str(docs), "--output", str(fps))

    # The executors' fingerprints are the CLI's, bit for bit.
    by_cli = {}
    for line in run_cli(cli, "fingerprint", str(docs)).splitlines():
        id, fp = line.split("\t")
        by_cli[id] = int(fp, 16)
    by_spark = {r["id"]: tables.unsigned(r["fingerprint"]) for r in read_rows(fps)}
    assert by_spark == by_cli
    assert len(by_spark) == 100_000

    # The CLI reads Spark's part files; Spark (and pyarrow) read the CLI's Parquet.
    store = tmp_path / "store"
    run_cli(cli, "init", str(store), "--expected-size", "100000")
    run_cli(cli, "insert", str(store), str(fps))
    cli_pairs, cli_clusters = tmp_path / "pairs.parquet", tmp_path / "clusters.parquet"
    run_cli(cli, "audit", str(store), "--pairs", str(cli_pairs), "--clusters", str(cli_clusters))
    expected_pairs = pair_set(read_rows(cli_pairs))
    expected_clusters = partition(read_rows(cli_clusters))
    assert sum(1 for a, b, d in expected_pairs if d == 0) >= 600 * 599 // 2, "copies pair at 0"
    assert any(d > 0 for _, _, d in expected_pairs), "near duplicates are planted"

    # Small chunks make the 600 copies (and any crowded bucket) many tasks, not one.
    pairs = tmp_path / "spark-pairs"
    job(cluster, "audit", "--input", str(fps), "--output", str(pairs), "--distance", "3",
        "--chunk-rows", "100")
    assert pair_set(read_rows(pairs)) == expected_pairs

    clusters = tmp_path / "spark-clusters"
    job(cluster, "clusters", "--input", str(fps), "--output", str(clusters), "--distance", "3")
    rows = read_rows(clusters)
    assert partition(rows) == expected_clusters
    smallest = {id: min(g) for g in partition(rows) for id in g}
    assert all(r["cluster_id"] == smallest[r["id"]] for r in rows), "named by the smallest id"

    # Clusters of pairs (the CLI's pairs file, read by Spark) are the same clusters.
    from_pairs = tmp_path / "spark-clusters-of-pairs"
    job(cluster, "clusters", "--input", str(cli_pairs), "--output", str(from_pairs))
    assert partition(read_rows(from_pairs)) == expected_clusters

    # Another distance and explicit blocks: still the CLI's answer.
    narrow = tmp_path / "spark-pairs-1"
    job(cluster, "audit", "--input", str(fps), "--output", str(narrow), "--distance", "1",
        "--blocks", "6")
    assert pair_set(read_rows(narrow)) == {p for p in expected_pairs if p[2] <= 1}


def test_bad_input_fails_with_a_clear_error(cluster, tmp_path):
    bad = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"name": ["a", "b"], "fingerprint": [1, 2]}), bad)
    done = job(cluster, "audit", "--input", str(bad), "--output", str(tmp_path / "o"), check=False)
    assert done.returncode == 1, done.stderr[-3000:]
    assert "no column 'id'" in done.stderr and "name, fingerprint" in done.stderr

    repeated = tmp_path / "repeated.parquet"
    pq.write_table(pa.table({"id": ["a", "a"], "fingerprint": [1, 2]}), repeated)
    done = job(cluster, "audit", "--input", str(repeated), "--output", str(tmp_path / "r"),
               check=False)
    assert done.returncode == 1 and "id 'a' appears 2 times" in done.stderr, done.stderr[-3000:]
    assert not (tmp_path / "r").exists()

    # Usage errors stop before Spark starts.
    for args in (["--distance", "3", "--blocks", "3"], ["--chunk-rows", "0"], ["--conf", "x"]):
        done = subprocess.run(
            [sys.executable, "-m", "simhashdb.spark", "audit", "--input", str(bad),
             "--output", str(tmp_path / "u"), *args], capture_output=True, text=True, timeout=60)
        assert done.returncode == 2, (args, done.stderr)


def test_fingerprint_without_arrow_and_bad_texts(cluster, cli, tmp_path):
    docs = tmp_path / "docs.parquet"
    texts = [f"document {i} about {i % 3} things" for i in range(50)]
    pq.write_table(pa.table({"key": list(range(50)), "body": texts}), docs)
    out = tmp_path / "fps"
    job(cluster, "fingerprint", "--input", str(docs), "--output", str(out), "--no-arrow",
        "--id-column", "key", "--text-column", "body", "--scheme", "chars")
    by_cli = {}
    cli_out = run_cli(cli, "fingerprint", str(docs), "--id-column", "key", "--text-column",
                      "body", "--scheme", "chars")
    for line in cli_out.splitlines():
        id, fp = line.split("\t")
        by_cli[int(id)] = int(fp, 16)
    assert {r["id"]: tables.unsigned(r["fingerprint"]) for r in read_rows(out)} == by_cli

    # One bad text each way the executors can get texts.
    for name, text, says, arrow in [("null", None, "document 1: null 'text'", []),
                                    ("empty", "  ...  ", "document 1: the document has no token",
                                     ["--no-arrow"])]:
        bad = tmp_path / f"{name}.parquet"
        pq.write_table(pa.table({"id": [0, 1], "text": ["fine words", text]}), bad)
        done = job(cluster, "fingerprint", "--input", str(bad), "--output",
                   str(tmp_path / f"o-{name}"), *arrow, check=False)
        assert done.returncode == 1 and says in done.stderr, (name, done.stderr[-3000:])
