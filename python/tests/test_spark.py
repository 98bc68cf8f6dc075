"""The Spark jobs on a real standalone cluster (a master and two workers, each its own process,
on loopback), checked against the CLI on the same skewed data (thousands of copies of one
page): fingerprints, audit pairs, clusters, and dedup's kept rows and duplicates."""

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
from spark_cluster import ClusterError, driver, run_job, standalone_cluster  # noqa: E402

import simhashdb  # noqa: E402
import simhashdb.spark as sdb  # noqa: E402


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
                   "--conf", "spark.sql.shuffle.partitions=8",
                   # Failing tasks here fail on bad input, every time: no retries.
                   "--conf", "spark.task.maxFailures=1", timeout=900)
    if check and done.returncode != 0:
        pytest.fail(f"{' '.join(args)} failed ({done.returncode}):\n{done.stderr[-5000:]}")
    return done


COPIES = 2000


def corpus(path: Path, documents: int, seed: int = 7) -> None:
    """Documents (id, text, batch, extra): random texts, a fifth with a near duplicate (one
    word changed), a seventh with an exact copy, and COPIES copies of one boilerplate page (a
    hot fingerprint), each in a batch 1-3 at random, with an extra column of doubles."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(20000)]
    ids, texts = [], []

    def add(text: str) -> None:
        ids.append(f"d{len(ids):06d}")
        texts.append(text)

    while len(ids) < documents - COPIES:
        text = [rng.choice(words) for _ in range(40)]
        add(" ".join(text))
        if rng.random() < 0.2:
            changed = list(text)
            changed[rng.randrange(len(changed))] = rng.choice(words)
            add(" ".join(changed))
        if rng.random() < 1 / 7:
            add(" ".join(text))
    for _ in range(COPIES):
        add("accept cookies to continue reading this page privacy policy terms of use")
    batches = [rng.randint(1, 3) for _ in ids]
    extra = [rng.random() for _ in ids]
    pq.write_table(pa.table({"id": ids, "text": texts, "batch": batches, "extra": extra}), path)


def read_rows(path: Path) -> List[Dict]:
    return pq.read_table(path).to_pylist()


def pair_set(table) -> Set[Tuple[str, str, int]]:
    """The pairs of a table (a Parquet path, or a pyarrow Table): millions of them, so read by
    column, not as a dict per row."""
    if isinstance(table, Path):
        table = pq.read_table(table)
    columns = [table.column(c).to_pylist() for c in ("id_a", "id_b", "distance")]
    pairs = set(zip(*columns))
    assert len(pairs) == table.num_rows, "each pair once"
    return pairs


def partition(rows: List[Dict]) -> Set[frozenset]:
    groups: Dict = {}
    for r in rows:
        groups.setdefault(r["cluster_id"], set()).add(r["id"])
    return {frozenset(g) for g in groups.values()}


def test_fingerprint_audit_and_clusters_equal_the_cli(cluster, cli, tmp_path):
    docs = tmp_path / "docs.parquet"
    corpus(docs, 50_000)
    fps = tmp_path / "fingerprints"
    job(cluster, "fingerprint", "--input", str(docs), "--output", str(fps))

    # The executors' fingerprints are the CLI's, bit for bit.
    by_cli = {}
    for line in run_cli(cli, "fingerprint", str(docs)).splitlines():
        id, fp = line.split("\t")
        by_cli[id] = int(fp, 16)
    by_spark = {r["id"]: tables.unsigned(r["fingerprint"]) for r in read_rows(fps)}
    assert by_spark == by_cli
    assert len(by_spark) == pq.read_metadata(docs).num_rows >= 50_000

    # The CLI reads Spark's part files; Spark (and pyarrow) read the CLI's Parquet.
    store = tmp_path / "store"
    run_cli(cli, "init", str(store), "--expected-size", "50000")
    run_cli(cli, "insert", str(store), str(fps))
    cli_pairs, cli_clusters = tmp_path / "pairs.parquet", tmp_path / "clusters.parquet"
    run_cli(cli, "audit", str(store), "--pairs", str(cli_pairs), "--clusters", str(cli_clusters))
    expected_pairs = pair_set(cli_pairs)
    expected_clusters = partition(read_rows(cli_clusters))
    assert sum(1 for a, b, d in expected_pairs if d == 0) >= COPIES * (COPIES - 1) // 2, \
        "copies pair at 0"
    assert any(d > 0 for _, _, d in expected_pairs), "near duplicates are planted"

    # Small chunks make the copies of the hot page many blocks of pairs, not one task.
    pairs = tmp_path / "spark-pairs"
    job(cluster, "audit", "--input", str(fps), "--output", str(pairs), "--distance", "3",
        "--chunk-rows", "500")
    assert pair_set(pairs) == expected_pairs

    # Clusters of the store's export, as the CLI writes it (id, fingerprint, batch).
    exported = tmp_path / "export.parquet"
    run_cli(cli, "export", str(store), "--output", str(exported))
    clusters = tmp_path / "spark-clusters"
    job(cluster, "clusters", "--input", str(exported), "--output", str(clusters),
        "--distance", "3")
    rows = read_rows(clusters)
    assert partition(rows) == expected_clusters
    smallest = {id: min(g) for g in partition(rows) for id in g}
    assert all(r["cluster_id"] == smallest[r["id"]] for r in rows), "named by the smallest id"

    # The same jobs as functions, in one driver: clusters of pairs (the CLI's pairs file, read
    # by Spark) are the same clusters, and another distance with explicit blocks still gives
    # the CLI's answer.
    with driver(cluster) as session:
        of_pairs = sdb.clusters(session.read.parquet(str(cli_pairs))).collect()
        assert partition([r.asDict() for r in of_pairs]) == expected_clusters
        narrow = sdb.audit(session.read.parquet(str(fps)), distance=1, blocks=6).toArrow()
        assert pair_set(narrow) == {p for p in expected_pairs if p[2] <= 1}


def test_dedup_keeps_what_the_local_rule_keeps(cluster, cli, tmp_path):
    """dedup from texts, with the skewed corpus: the kept rows (every column) and the
    duplicates are what the CLI's audit --duplicates drops of a store holding the documents in
    their batches; without --order-by, of a store holding them in one batch."""
    import pyarrow.compute as pc

    docs = tmp_path / "docs.parquet"
    corpus(docs, 30_000, seed=11)
    table = pq.read_table(docs)
    rows = table.to_pylist()

    def cli_duplicates(store: Path, parts: List[Path]) -> Dict[str, Tuple[str, int]]:
        run_cli(cli, "init", str(store), "--expected-size", "30000")
        for part in parts:
            run_cli(cli, "insert", str(store), str(part))
        listed = tmp_path / f"{store.name}.tsv"
        run_cli(cli, "audit", str(store), "--duplicates", str(listed))
        return {f[0]: (f[1], int(f[2]))
                for f in (line.split("\t") for line in listed.read_text().splitlines())}

    parts = []
    for b in (1, 2, 3):
        part = tmp_path / f"batch{b}.parquet"
        pq.write_table(table.filter(pc.equal(table["batch"], b)).select(["id", "text"]), part)
        parts.append(part)
    by_batch = cli_duplicates(tmp_path / "batches", parts)
    assert len(by_batch) >= COPIES - 1, "the copies of the hot page are dropped but one"

    kept, dups = tmp_path / "kept", tmp_path / "dups"
    job(cluster, "dedup", "--input", str(docs), "--output", str(kept), "--duplicates", str(dups),
        "--text-column", "text", "--scheme", "words-2-minhash", "--order-by", "batch",
        "--chunk-rows", "500")
    assert {r["id"]: (r["kept_id"], r["distance"]) for r in read_rows(dups)} == by_batch
    want = sorted((r for r in rows if r["id"] not in by_batch), key=lambda r: r["id"])
    assert sorted(read_rows(kept), key=lambda r: r["id"]) == want, "kept rows, every column"

    in_one = cli_duplicates(tmp_path / "one", [docs])
    with driver(cluster) as session:
        fps = sdb.fingerprint(session.read.parquet(str(docs)))
        kept_df, dups_df = sdb.dedup(fps)
        assert {r["id"]: (r["kept_id"], r["distance"]) for r in dups_df.collect()} == in_one
        assert kept_df.count() == len(rows) - len(in_one)
        assert kept_df.columns == ["id", "fingerprint"]


def chained_corpus(path: Path, documents: int, seed: int) -> None:
    """corpus()'s documents plus a chain of 1,000 near copies: each link is the one before
    with one word of 60 changed (J about 0.9 to the one before, less to those further on)."""
    corpus(path, documents, seed)
    table = pq.read_table(path)
    rng = random.Random(seed)
    words = [f"c{i}" for i in range(5000)]
    link = [rng.choice(words) for _ in range(60)]
    ids, texts = [], []
    for i in range(1000):
        ids.append(f"chain-{i:04}")
        texts.append(" ".join(link))
        link[(i * 7) % len(link)] = f"x{i}"
    chain = pa.table({"id": ids, "text": texts,
                      "batch": [rng.randint(1, 3) for _ in ids],
                      "extra": [rng.random() for _ in ids]})
    pq.write_table(pa.concat_tables([table, chain.cast(table.schema)]), path)


def test_verified_dedup_equals_the_local_verified_audit(cluster, cli, tmp_path):
    """dedup --min-jaccard 0.8 at distance 8: the sketches computed in the tasks verify the
    candidate pairs as a store made with `init --sketch` does, and the keep rule over a chain
    of 1,000 near copies and 2,000 copies of one page drops what the CLI's audit --min-jaccard
    --duplicates drops of a store holding the documents in their batches (matches, distances
    and estimates); fingerprints alone cannot be verified (a usage error)."""
    import pyarrow.compute as pc

    docs = tmp_path / "docs.parquet"
    chained_corpus(docs, 6_000, seed=5)
    table = pq.read_table(docs)
    store = tmp_path / "store"
    run_cli(cli, "init", str(store), "--sketch", "--distance", "8", "--expected-size", "10000")
    for b in (1, 2, 3):
        part = tmp_path / f"batch{b}.parquet"
        pq.write_table(table.filter(pc.equal(table["batch"], b)).select(["id", "text"]), part)
        run_cli(cli, "insert", str(store), str(part))
    listed = tmp_path / "local.tsv"
    run_cli(cli, "audit", str(store), "--min-jaccard", "0.8", "--duplicates", str(listed))
    local = {f[0]: (f[1], int(f[2]), f[3])
             for f in (line.split("\t") for line in listed.read_text().splitlines())}
    chain_kept = 1000 - sum(1 for id in local if id.startswith("chain-"))
    assert chain_kept > 1, "the chain keeps several links"
    assert sum(1 for id in local if id.startswith("d")) >= COPIES - 1

    kept, dups = tmp_path / "kept", tmp_path / "dups"
    job(cluster, "dedup", "--input", str(docs), "--output", str(kept), "--duplicates", str(dups),
        "--text-column", "text", "--scheme", "words-2-minhash", "--order-by", "batch",
        "--distance", "8", "--min-jaccard", "0.8", "--sketch-bytes", "128")
    got = {r["id"]: (r["kept_id"], r["distance"], f"{r['jaccard']:.6f}") for r in read_rows(dups)}
    assert got == local
    assert pq.read_table(kept).num_rows == table.num_rows - len(local)

    done = job(cluster, "dedup", "--input", str(docs), "--output", str(tmp_path / "no"),
               "--fingerprint-column", "fingerprint", "--min-jaccard", "0.8", check=False)
    assert done.returncode == 2, done.stderr
    assert "--min-jaccard" in done.stderr and "--text-column" in done.stderr


def test_dedup_against_references_equals_the_cli_dedup_into_their_store(cluster, cli, tmp_path):
    """dedup --against: new documents against a reference corpus of two batches (two Parquet
    exports of a store made with --sketch), the hot page's 2,000 copies across both sides and
    re-crawled ids (a new document with a reference's id, its text unchanged or not). The
    duplicates, their matches, distances and the reference named are what the CLI's dedup of
    the same documents (in id order) into the store drops, unverified and verified; the
    references are never dropped; the Python API agrees; bad references are named."""
    import pyarrow.compute as pc

    docs = tmp_path / "docs.parquet"
    corpus(docs, 12_000, seed=23)
    table = pq.read_table(docs)
    store = tmp_path / "store"
    run_cli(cli, "init", str(store), "--sketch", "--expected-size", "20000")
    for b in (1, 2):
        part = tmp_path / f"ref{b}.in.parquet"
        pq.write_table(table.filter(pc.equal(table["batch"], b)).select(["id", "text"]), part)
        run_cli(cli, "insert", str(store), str(part))
    exported = tmp_path / "export.parquet"
    run_cli(cli, "export", str(store), "--sketch", "--output", str(exported))
    export = pq.read_table(exported)
    batches = sorted(set(export.column("batch").to_pylist()))
    assert len(batches) == 2
    refs = []
    for b in batches:
        ref = tmp_path / f"ref-{b}.parquet"
        pq.write_table(export.filter(pc.equal(export["batch"], b)), ref)
        refs.append(ref)
    source = {b: str(ref) for b, ref in zip(batches, refs)}
    new = table.filter(pc.equal(table["batch"], 3)).select(["id", "text"])
    stored = table.filter(pc.not_equal(table["batch"], 3))
    recrawled = stored.slice(0, 40).select(["id", "text"])
    changed = pa.table({"id": recrawled["id"].to_pylist()[20:],
                        "text": [f"fresh page {i} " + "z " * i for i in range(20)]})
    new = pa.concat_tables([new, recrawled.slice(0, 20), changed])
    new = new.take(pc.sort_indices(new, [("id", "ascending")]))
    assert sum(1 for t in new["text"].to_pylist() if t == table["text"][-1].as_py()) > 100
    new_path = tmp_path / "new.parquet"
    pq.write_table(new, new_path)

    def cli_dedup(*flags: str) -> Dict[str, Tuple]:
        copy = tmp_path / f"copy{len(flags)}"
        shutil.copytree(store, copy)
        listed = tmp_path / f"local{len(flags)}.tsv"
        run_cli(cli, "dedup", str(copy), str(new_path), "--duplicates", str(listed),
                "--output", str(tmp_path / f"local{len(flags)}.parquet"), *flags)
        out = {}
        for line in listed.read_text().splitlines():
            f = line.split("\t")
            jaccard = round(float(f[3]), 5) if flags and f[3] else None
            batch = f[-3]
            out[f[0]] = (f[1], int(f[2]), source[int(batch)] if batch else None, jaccard)
        return out

    def spark_dups(path: Path) -> Dict[str, Tuple]:
        return {r["id"]: (r["kept_id"], r["distance"], r["reference"],
                          None if r["jaccard"] is None else round(r["jaccard"], 5))
                for r in read_rows(path)}

    plain = cli_dedup()
    assert sum(1 for v in plain.values() if v[2] is None) > 0, "matches within the input"
    assert sum(1 for v in plain.values() if v[2] == source[batches[1]]) > 0
    assert all(plain[i][1] == 0 for i in recrawled["id"].to_pylist()[:20]), "re-crawled"
    for flags, want in (((), plain), (("--min-jaccard", "0.8"), cli_dedup("--min-jaccard", "0.8"))):
        kept, dups = tmp_path / f"kept{len(flags)}", tmp_path / f"dups{len(flags)}"
        args = ["dedup", "--input", str(new_path), "--output", str(kept), "--duplicates", str(dups),
                "--text-column", "text", "--scheme", "words-2-minhash", "--chunk-rows", "500",
                *flags]
        for ref in refs:
            args += ["--against", str(ref)]
        job(cluster, *args)
        assert spark_dups(dups) == want, flags
        assert sorted(pq.read_table(kept)["id"].to_pylist()) == sorted(
            i for i in new["id"].to_pylist() if i not in want)

    with driver(cluster) as session:
        fps = sdb.fingerprint(session.read.parquet(str(new_path)))
        from pyspark.sql import functions as F

        references = [session.read.parquet(str(r)).drop("sketch") for r in refs]
        # Fingerprints as hex strings read the same (half of them past 2^63).
        references[0] = references[0].withColumn(
            "fingerprint", F.lpad(F.hex("fingerprint"), 16, "0"))
        kept_df, dups_df = sdb.dedup(fps, against=references)
        named = {str(r): str(i) for i, r in enumerate(refs)}
        assert {r["id"]: (r["kept_id"], r["distance"], r["reference"]) for r in dups_df.collect()} \
            == {i: (k, d, named.get(ref)) for i, (k, d, ref, _) in plain.items()}
        assert kept_df.count() == new.num_rows - len(plain)
        with pytest.raises(ValueError, match="no column 'fingerprint'"):
            sdb.dedup(fps, against={"texts": session.read.parquet(str(new_path))})
        with pytest.raises(ValueError, match="against"):
            sdb.dedup(fps, against=[])

    bad = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"id": ["a", "b"], "fingerprint": ["00ff", "nothex"]}), bad)
    done = job(cluster, "dedup", "--input", str(new_path), "--output", str(tmp_path / "no"),
               "--text-column", "text", "--against", str(bad), check=False)
    assert done.returncode == 1, done.stderr
    assert f"reference {bad}: document 'b'" in done.stderr, done.stderr[-2000:]
    for args, message in (
        (["audit", "--against", str(refs[0])], "--against is for dedup"),
        (["dedup", "--against", str(tmp_path / "nothing")], "no such file"),
        (["dedup", "--against", str(new_path)], "is --input"),
    ):
        done = job(cluster, *args[:1], "--input", str(new_path), "--output", str(tmp_path / "no"),
                   *args[1:], check=False)
        assert done.returncode == 2 and message in done.stderr, done.stderr[-2000:]


def test_arrow_fingerprints_refuse_bad_rows_naming_them(cluster, tmp_path):
    """The Arrow path hands each batch's texts to the engine whole; a null, an empty text, one
    that is not UTF-8 (a binary column) and one past 64 MiB each fail naming the row's id."""
    huge = "word " * (64 * 1024 * 1024 // 5 + 1)
    cases = [
        (pa.string(), None, "document 'bad': null 'text'"),
        (pa.string(), "", "document 'bad': the document has no token"),
        (pa.binary(), b"caf\xe9 au lait", "document 'bad': 'text' is not valid UTF-8"),
        (pa.string(), huge, f"document 'bad': the document's text has {len(huge)} bytes"),
    ]
    with driver(cluster) as session:
        for n, (kind, text, says) in enumerate(cases):
            path = tmp_path / f"case{n}.parquet"
            good = b"fine words here" if kind == pa.binary() else "fine words here"
            pq.write_table(pa.table({"id": ["ok", "bad"], "text": pa.array([good, text], kind)}),
                           path)
            with pytest.raises(Exception, match=says):
                sdb.fingerprint(session.read.parquet(str(path)), arrow=True).collect()
        # A binary column of valid UTF-8 fingerprints as the strings do.
        path = tmp_path / "binary.parquet"
        texts = [f"text number {i} of a few words" for i in range(100)]
        pq.write_table(pa.table({"id": [f"t{i}" for i in range(100)],
                                 "text": pa.array([t.encode() for t in texts], pa.binary())}),
                       path)
        got = {r["id"]: r["fingerprint"] for r in
               sdb.fingerprint(session.read.parquet(str(path))).collect()}
        want = {f"t{i}": tables.signed(simhashdb.fingerprint(t)) for i, t in enumerate(texts)}
        assert got == want
    # The job reads the Parquet in its tasks: a bad row fails it naming the document, and
    # leaves no output; an output that exists is refused unless --overwrite.
    out = tmp_path / "out"
    done = job(cluster, "fingerprint", "--input", str(tmp_path / "case0.parquet"),
               "--output", str(out), check=False)
    assert done.returncode == 1 and "document 'bad': null 'text'" in done.stderr, \
        done.stderr[-3000:]
    assert not out.exists()
    job(cluster, "fingerprint", "--input", str(path), "--output", str(out))
    assert {r["id"]: r["fingerprint"] for r in read_rows(out)} == want
    done = job(cluster, "fingerprint", "--input", str(path), "--output", str(out), check=False)
    assert done.returncode == 1 and "already exists" in done.stderr, done.stderr[-3000:]
    job(cluster, "fingerprint", "--input", str(path), "--output", str(out), "--overwrite")
    assert {r["id"]: r["fingerprint"] for r in read_rows(out)} == want


def test_bad_input_fails_with_a_clear_error(cluster, cli, tmp_path):
    bad = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"name": ["a", "b"], "fingerprint": [1, 2]}), bad)
    done = job(cluster, "audit", "--input", str(bad), "--output", str(tmp_path / "o"), check=False)
    assert done.returncode == 1, done.stderr[-3000:]
    assert "no column 'id'" in done.stderr and "name, fingerprint" in done.stderr
    assert not (tmp_path / "o").exists()

    # Usage errors stop before Spark starts.
    for args in (["--distance", "3", "--blocks", "3"], ["--chunk-rows", "0"], ["--conf", "x"],
                 ["--scheme", "nonsense"]):
        done = subprocess.run(
            [sys.executable, "-m", "simhashdb.spark", "fingerprint", "--input", str(bad),
             "--output", str(tmp_path / "u"), *args], capture_output=True, text=True, timeout=60)
        assert done.returncode == 2, (args, done.stderr)

    with driver(cluster) as session:
        repeated = session.createDataFrame([("a", 1), ("a", 2)], "id string, fingerprint long")
        with pytest.raises(ValueError, match="id 'a' appears 2 times"):
            sdb.audit(repeated)
        nulls = session.createDataFrame([("a", 1), ("b", None)], "id string, fingerprint long")
        with pytest.raises(ValueError, match="document 'b': null 'fingerprint'"):
            sdb.clusters(nulls)
        floats = session.createDataFrame([("a", 1.0)], "id string, fingerprint double")
        with pytest.raises(ValueError, match="has type double"):
            sdb.audit(floats)

        # Fingerprints from pickled rows as from Arrow batches, with other column names and
        # scheme, are the CLI's; a bad text fails the job naming its document, either way.
        docs = tmp_path / "docs.parquet"
        texts = [f"document {i} about {i % 3} things" for i in range(50)]
        pq.write_table(pa.table({"key": list(range(50)), "body": texts}), docs)
        cli_out = run_cli(cli, "fingerprint", str(docs), "--id-column", "key", "--text-column",
                          "body", "--scheme", "chars")
        by_cli = {int(line.split("\t")[0]): int(line.split("\t")[1], 16)
                  for line in cli_out.splitlines()}
        frame = session.read.parquet(str(docs))
        for arrow in (True, False):
            rows = sdb.fingerprint(frame, "chars", id_column="key", text_column="body",
                                   arrow=arrow).collect()
            assert {r["id"]: tables.unsigned(r["fingerprint"]) for r in rows} == by_cli, arrow
        for text, says, arrow in [(None, "document 1: null 'text'", True),
                                  ("  ...  ", "document 1: the document has no token", False)]:
            bad_texts = session.createDataFrame([(0, "fine words"), (1, text)],
                                                "id long, text string")
            with pytest.raises(Exception, match=says):
                sdb.fingerprint(bad_texts, arrow=arrow).collect()
