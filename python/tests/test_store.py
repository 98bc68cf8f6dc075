"""The Store: answers equal to brute force and to the CLI on the same data, numpy in and out,
every error type, stores shared with the CLI both ways, and threads."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import simhashdb
from simhashdb import CorruptionError, Store, StoreLockedError

from conftest import brute_matches, brute_pairs, components, json_lines, random_documents, run_cli, tsv


def build(path, rng, n, batches=3, **settings):
    """A store written in `batches` batches (later ones replacing some ids), some deletes; and
    the model of what it holds."""
    store = Store.create(path, **settings)
    model = {}
    for b in range(batches):
        ids, fps = random_documents(rng, n, prefix=f"d{b % 2}-")
        store.insert(ids, fps, label=f"batch-{b}")
        model.update(zip(ids, (int(f) for f in fps)))
    doomed = [f"d0-{i}" for i in range(0, n, 7)]
    store.delete(doomed)
    for id in doomed:
        model.pop(id, None)
    return store, model


@pytest.mark.parametrize(
    "seed,settings",
    [(1, dict(distance=3)), (2, dict(distance=4, blocks=8, shards=16)), (3, dict(distance=2, blocks=4, shards=1))],
)
def test_queries_and_audit_equal_brute_force(tmp_path, seed, settings):
    rng = np.random.default_rng(seed)
    store, model = build(tmp_path / "s", rng, 700, **settings)
    k = store.distance
    fps = np.array(list(model.values()), dtype=np.uint64)
    queries = np.concatenate(
        [fps[:150], fps[150:300] ^ np.uint64(0b1011), rng.integers(0, 2**64, 100, dtype=np.uint64)]
    )
    for d in range(k + 1):
        got = store.query_many(queries, d)
        for q, query in enumerate(queries.tolist()):
            rows = got.query == q
            as_tuples = list(zip(got.id[rows].tolist(), got.fingerprint[rows].tolist(), got.distance[rows].tolist()))
            want = brute_matches(model, query, d)
            assert as_tuples == want, (d, q)
            if q % 25 == 0:
                assert store.query(query, d) == want
        # In the CLI's streaming order (by fingerprint), the same pairs as brute force.
        assert sorted(store.audit(d)) == brute_pairs(model, d)
    assert store.query(int(queries[0])) == brute_matches(model, int(queries[0]), k)
    # Clusters: the connected components of the pairs.
    pairs = brute_pairs(model, k)
    assert list(store.audit(clusters=True)) == components(pairs)
    with_singletons = list(store.audit(clusters=True, singletons=True))
    assert sorted(m for c in with_singletons for m in c) == sorted(model)
    assert len(store) == len(model)
    store.compact()
    assert sorted(store.audit()) == pairs
    store.close()


def test_numpy_dtypes_and_shapes(tmp_path):
    with Store.create(tmp_path / "s", expected_size=1000) as store:
        store.insert(["a", "b", "c"], np.array([1, 3, 2**63], dtype=np.uint64))
        for given in ([1, 2**63], np.array([1, 2**63], dtype=np.uint64), (1, 2**63), iter([1, 2**63])):
            r = store.query_many(given)
            assert isinstance(r, simhashdb.QueryResults)
            assert (r.query.dtype, r.id.dtype, r.fingerprint.dtype, r.distance.dtype) == (
                np.dtype(np.int64), np.dtype(object), np.dtype(np.uint64), np.dtype(np.int32))
            assert r.query.tolist() == [0, 0, 0, 1, 1, 1]
            assert r.id.tolist() == ["a", "b", "c", "c", "a", "b"]
            assert r.fingerprint.tolist() == [1, 3, 2**63, 2**63, 1, 3]
            assert r.distance.tolist() == [0, 1, 2, 0, 2, 3]
        q, ids, fps, dist = store.query_many(np.array([], dtype=np.uint64))
        assert q.shape == ids.shape == fps.shape == dist.shape == (0,)
        assert store.query_many(np.array([7], dtype=np.int64), 0).id.tolist() == []
        r.fingerprint[0] = 5  # arrays are writable copies
        fp = simhashdb.fingerprint_many(["a b c", "d e f"])
        assert fp.dtype == np.uint64 and fp.shape == (2,)
        assert simhashdb.fingerprint_many([]).shape == (0,)
        arrays = store.audit().to_numpy()
        assert arrays["a"].tolist() == ["a", "a", "b"] and arrays["distance"].dtype == np.int32
        clusters = store.audit(clusters=True).to_numpy()
        # Clusters are numbered from 1, as the CLI and its Parquet output number them.
        assert clusters["cluster"].tolist() == [1, 1, 1] and clusters["id"].tolist() == ["a", "b", "c"]
        for bad in (np.zeros((2, 2), dtype=np.uint64), np.array([1.5]), [2**64], [-(2**63) - 1], ["1"], "12", [1.0]):
            with pytest.raises(ValueError):
                store.query_many(bad)
        with pytest.raises(ValueError, match=r"fingerprints\[1\]"):
            store.insert(["x", "y"], [1, 2**64])
        # int64 fingerprints (Arrow's, Spark's, the Parquet export's) are the same 64 bits.
        as_int64 = np.array([2**63], dtype=np.uint64).astype(np.int64)
        assert as_int64[0] < 0
        assert store.query_many(as_int64, 0).id.tolist() == ["c"]
        assert store.query_many([int(as_int64[0])], 0).id.tolist() == ["c"]
        assert store.query(int(as_int64[0]), 0) == store.query(2**63, 0) == [("c", 2**63, 0)]


def test_pandas_when_installed(tmp_path):
    pandas = pytest.importorskip("pandas")
    with Store.create(tmp_path / "s", expected_size=1000) as store:
        store.insert(["a", "b"], [1, 3])
        frame = store.audit().to_pandas()
        assert isinstance(frame, pandas.DataFrame)
        assert frame.to_dict("records") == [{"a": "a", "b": "b", "distance": 1}]


def test_round_trip_equals_the_cli(tmp_path, cli):
    rng = np.random.default_rng(5)
    ids, fps = random_documents(rng, 1500)
    data = tmp_path / "docs.tsv"
    data.write_text(tsv(ids, fps))
    a, b = str(tmp_path / "cli"), tmp_path / "py"
    run_cli(cli, "init", a, "--expected-size", "1e6")
    cli_summary = json.loads(run_cli(cli, "insert", a, str(data), "--json", "--label", "day1"))
    with Store.create(b, expected_size=10**6) as store:
        py_summary = store.insert(ids, fps, label="day1")
        assert py_summary == cli_summary
        assert store.insert_file(data, label="day1") == json.loads(
            run_cli(cli, "insert", a, str(data), "--json", "--label", "day1"))
        queries = fps[:300]
        qfile = tmp_path / "q.txt"
        qfile.write_text("".join(f"{int(f):016x}\n" for f in queries))
        cli_rows = json_lines(run_cli(cli, "query", a, "--input", str(qfile), "--json"))
        got = store.query_many(queries)
        py_rows = [
            (int(f"{queries[q]:016x}", 16), i, int(fp), int(d))
            for q, i, fp, d in zip(got.query, got.id, got.fingerprint, got.distance)
        ]
        assert [(int(r["query"], 16), r["id"], int(r["fingerprint"], 16), r["distance"]) for r in cli_rows] == py_rows
        cli_pairs = run_cli(cli, "audit", a).splitlines()
        assert cli_pairs == [f"{x}\t{y}\t{d}" for x, y, d in store.audit()]
        assert json.loads(run_cli(cli, "delete", a, "d1", "d2", "nope", "--json")) == store.delete(["d1", "d2", "nope"])
        cli_stats = json.loads(run_cli(cli, "stats", a, "--json"))
        py_stats = store.stats()
        for key in ("documents", "fingerprints", "batches", "runs", "blocks", "distance", "scheme"):
            assert cli_stats[key] == py_stats[key], key
        cli_batches = json_lines(run_cli(cli, "batches", a, "--json"))
        strip = lambda rows: [{k: v for k, v in r.items() if not k.startswith("committed")} for r in rows]
        assert strip(cli_batches) == strip(store.batches())
        assert store.verify()["clean"] and json.loads(run_cli(cli, "verify", a, "--json"))["clean"]


def test_texts_fingerprint_as_the_cli_does(tmp_path, cli):
    texts = [
        "The quick brown fox jumps over the lazy dog",
        "the QUICK brown fox -- jumps over the lazy dog!",
        "Ünïcödé text, with accents and 数字 123",
        "one two three four five six seven eight nine ten",
    ]
    lines = "".join(json.dumps({"id": f"t{i}", "text": t}) + "\n" for i, t in enumerate(texts))
    for scheme in ([], ["--scheme", "chars"], ["--scheme", "seomoz"], ["--scheme", "words", "--shingle", "3", "--weight", "count"], ["--scheme", "chars", "--shingle", "4", "--weight", "set"]):
        out = run_cli(cli, "fingerprint", *scheme, "-", input=lines)
        want = [int(line.split("\t")[1], 16) for line in out.splitlines()]
        name = scheme[1] if scheme else None
        shingle = int(scheme[3]) if len(scheme) > 2 else None
        weight = scheme[5] if len(scheme) > 4 else None
        assert simhashdb.fingerprint_many(texts, name, shingle=shingle, weight=weight).tolist() == want
        assert [simhashdb.fingerprint(t, name, shingle=shingle, weight=weight) for t in texts] == want
    # A store fingerprints text with its own scheme, as `insert` does.
    a = str(tmp_path / "cli")
    run_cli(cli, "init", a, "--scheme", "chars", "--expected-size", "1000")
    (tmp_path / "docs.jsonl").write_text(lines)
    cli_summary = json.loads(run_cli(cli, "insert", a, str(tmp_path / "docs.jsonl"), "--json"))
    with Store.create(tmp_path / "py", expected_size=1000, scheme="chars") as store:
        assert store.scheme == "chars-5-minhash"
        summary = store.insert_documents((f"t{i}", t) for i, t in enumerate(texts))
        assert summary == cli_summary
        for i, t in enumerate(texts):
            assert store.get(f"t{i}") == simhashdb.fingerprint(t, "chars")
        assert [m[0] for m in store.query_texts(texts[:1])[0]] == ["t0", "t1"]


def test_stores_shared_with_the_cli_both_ways(tmp_path, cli):
    a = str(tmp_path / "by-cli")
    run_cli(cli, "init", a, "--expected-size", "1000", "--distance", "4")
    run_cli(cli, "insert", a, "-", input="x\t0000000000000001\ny\t0000000000000003\n")
    with Store.open(a) as store:
        assert store.distance == 4
        assert store.query(1) == [("x", 1, 0), ("y", 3, 1)]
        store.insert(["z"], [7])
    assert run_cli(cli, "get", a, "z").split("\t")[:2] == ["z", "0000000000000007"]
    b = str(tmp_path / "by-python")
    with Store.create(b, distance=2, expected_size=1000, scheme="seomoz") as store:
        store.insert(["p", "q"], [2**63, 2**63 + 1])
    out = json_lines(run_cli(cli, "query", b, "--json", "--input", "-", input="8000000000000000\n"))
    assert [(r["id"], r["distance"]) for r in out] == [("p", 0), ("q", 1)]
    assert "seomoz" in run_cli(cli, "stats", b)
    # The CLI's write is seen by an open Store within its refresh interval.
    with Store.open(b) as store:
        run_cli(cli, "insert", b, "-", input="r\t8000000000000003\n")
        time.sleep(0.15)
        assert [m[0] for m in store.query(2**63)] == ["p", "q", "r"]


def test_errors(tmp_path, cli):
    path = tmp_path / "s"
    for distance in (0, -1):
        with pytest.raises(ValueError, match=f"distance {distance}: must be between 1 and 255"):
            Store.create(path, distance=distance)
    with pytest.raises(ValueError, match="scheme"):
        Store.create(path, scheme="bogus")
    store = Store.create(path, expected_size=1000)
    with pytest.raises(FileExistsError):
        Store.create(path)
    with pytest.raises(FileNotFoundError, match="not a simhashdb store"):
        Store.open(tmp_path / "missing")
    (tmp_path / "file").write_text("x")
    with pytest.raises(OSError):
        Store.open(tmp_path / "file")
    with pytest.raises(ValueError, match="exceeds the store's maximum distance 3"):
        store.query(1, 4)
    with pytest.raises(ValueError, match="2 ids but 1 fingerprints"):
        store.insert(["a", "b"], [1])
    with pytest.raises(ValueError, match=r"ids\[1\]"):
        store.insert(["a", ""], [1, 2])
    with pytest.raises(ValueError, match=r"ids\[0\]"):
        store.insert([5], [1])
    bad = tmp_path / "bad.tsv"
    bad.write_text("a\t0000000000000001\nb\tnot-a-fingerprint\n")
    with pytest.raises(ValueError, match=r"bad.tsv:2"):
        store.insert_file(bad)
    assert store.insert_file(bad, skip_invalid=True)["skipped"] == 1
    assert store.get("b") is None and store.get("a") == 1
    with pytest.raises(FileNotFoundError):
        store.insert_file(tmp_path / "nowhere.tsv")
    with pytest.raises(ValueError, match="format"):
        store.insert_file(bad, format="csv")
    batches_before = len(store.batches())
    with pytest.raises(ValueError, match="no token|letter or digit"):
        store.insert_documents([("t", "hello world"), ("u", " ... ")])
    assert store.get("t") is None and len(store.batches()) == batches_before
    with pytest.raises(ValueError, match=r"documents\[0\]"):
        store.insert_documents([("only-an-id",)])
    with pytest.raises(ValueError, match="exactly one"):
        store.expire()
    with pytest.raises(ValueError, match="label"):
        store.expire(batch="no-such-label")
    with pytest.raises(ValueError):
        store.expire(before="yesterday-ish")
    documents = len(store)
    with pytest.raises(ValueError, match="is in the future"):
        store.expire(before="2999-01-01")
    assert len(store) == documents and len(store.batches()) == batches_before
    assert store.expire(before="2999-01-01", dry_run=True)["dry_run"] is True
    with pytest.raises(ValueError):
        simhashdb.fingerprint("   ")
    with pytest.raises(ValueError, match=r"texts\[1\]"):
        simhashdb.fingerprint_many(["fine text", "!!!"])
    assert len(store.batches()) == batches_before  # nothing that failed was stored
    # Out-of-range numbers are bad input (ValueError), not arithmetic errors.
    for bad in (lambda: store.query(1, 2**33), lambda: store.query(1, -1), lambda: store.query(-(2**63) - 1),
                lambda: Store.create(tmp_path / "x", distance=300), lambda: Store.create(tmp_path / "x", blocks=-1),
                lambda: Store.open(path, cache_mib=-1), lambda: Store.open(path, pin=-5),
                lambda: simhashdb.fingerprint("a b", "words", shingle=-1), lambda: store.delete([""]),
                lambda: simhashdb.fingerprint_many(["ok", 5]), lambda: store.query_texts([None])):
        with pytest.raises(ValueError):
            bad()
    assert bool(store)
    # The writer lock: a CLI insert waiting on stdin holds it.
    holder = subprocess.Popen([str(cli), "insert", str(path), "-"], stdin=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 10
        while str(holder.pid) not in (path / "LOCK").read_text():
            assert time.time() < deadline, "the CLI never took the lock"
            time.sleep(0.02)
        with pytest.raises(StoreLockedError, match=f"pid {holder.pid}") as caught:
            store.insert(["c"], [3])
        assert isinstance(caught.value, OSError)
        assert caught.value.pid == holder.pid  # as the server's 409 gives it
        assert store.query(1)[0][0] == "a"  # queries are not affected
        holder.communicate("c\t0000000000000003\n", timeout=30)
    finally:
        holder.kill()
        holder.wait()
    assert holder.returncode == 0
    store.refresh()
    assert store.get("c") == 3
    store.close()
    store.close()
    with pytest.raises(ValueError, match="closed"):
        store.query(1)
    with pytest.raises(TypeError):
        Store(None)


def test_corruption_is_a_corruption_error(tmp_path):
    path = tmp_path / "s"
    with Store.create(path, blocks=6, distance=3, shards=1) as store:
        fps = np.sort(np.random.default_rng(3).integers(0, 2**64, 5000, dtype=np.uint64))
        store.insert([f"d{i}" for i in range(len(fps))], fps)
    (run,) = (path / "runs").iterdir()
    shard = run / "shard-000.redb"
    data = bytearray(shard.read_bytes())
    # Table 0 keeps fingerprints as they are; its first block's first restart key is the
    # smallest one, stored in full (docs/format.md).
    at = data.find(int(fps[0]).to_bytes(8, "little"))
    assert at > 0
    data[at] ^= 0x20
    shard.write_bytes(bytes(data))
    with Store.open(path) as store:
        with pytest.raises(CorruptionError, match="shard-000.redb"):
            store.query(int(fps[0]), 0)
        report = store.verify()
        assert not report["clean"] and "shard-000.redb" in report["findings"][0]["location"]


def test_paths_survive_chdir_and_lists_are_pairs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with Store.create("relative", expected_size=1000) as store:
        assert not len(store) and bool(store)
        monkeypatch.chdir("/")
        store.insert_documents([["a", "some words here"], ("b", "other words there")])
        assert store.path == str(tmp_path / "relative") and len(store) == 2
    with pytest.warns(UserWarning, match="simhashdb"):
        Store.create(tmp_path / "wide", blocks=12, distance=3, shards=1).close()


def _query_in_child(path, queries, out):
    import simhashdb as child

    with child.Store.open(path) as store:
        out.put(store.query_many(queries).id.tolist())
        # A write refreshes the reader, which loads the new run on the engine's background
        # pool: the parent's, started by its own insert, has no threads here.
        store.insert(["c"], [2**41])
        out.put(store.query(2**41, 0))
    out.put(child.fingerprint_many(["a b c d", "e f g h"]).tolist())


def test_a_forked_child_can_use_the_engine(tmp_path):
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork on this platform")
    with Store.create(tmp_path / "s", expected_size=1000) as store:
        store.insert(["a", "b"], [1, 3])
        queries = np.array([1, 3, 2**40], dtype=np.uint64)
        want = store.query_many(queries).id.tolist()  # the parent's thread pool is running
        fingerprints = simhashdb.fingerprint_many(["a b c d", "e f g h"]).tolist()
        context = multiprocessing.get_context("fork")
        out = context.Queue()
        child = context.Process(target=_query_in_child, args=(str(tmp_path / "s"), queries, out))
        child.start()
        try:
            assert out.get(timeout=60) == want
            assert out.get(timeout=60) == [("c", 2**41, 0)]
            assert out.get(timeout=60) == fingerprints
        finally:
            child.join(timeout=60)
            if child.is_alive():
                child.kill()
        assert child.exitcode == 0


def test_damage_redb_itself_finds_is_a_corruption_error(tmp_path):
    path = tmp_path / "s"
    with Store.create(path, expected_size=1000, shards=1) as store:
        store.insert([f"id{i}" for i in range(20000)], list(range(1, 20001)))
    (docs,) = (path / "runs").glob("*/docs.redb")
    data = bytearray(docs.read_bytes())
    for at in range(4096, len(data), 4096):  # one byte of every page but the header's
        data[at + 100] ^= 0xFF
    docs.write_bytes(bytes(data))
    with pytest.raises(CorruptionError, match="docs.redb"):
        with Store.open(path) as store:
            store.query(5, 0)


def test_threads_share_a_store(tmp_path):
    rng = np.random.default_rng(11)
    store, model = build(tmp_path / "s", rng, 3000, batches=2, expected_size=10**5)
    queries = np.array(list(model.values())[:2000], dtype=np.uint64) ^ np.uint64(3)
    alone = store.query_many(queries)
    singles = [store.query(int(q)) for q in queries[:200]]
    stop = threading.Event()
    inserted = []

    def writer():
        i = 0
        while not stop.is_set():
            store.insert([f"w{i}"], [int(rng.integers(0, 2**63))])
            inserted.append(i)
            i += 1

    def reader(part):
        for _ in range(5):
            # The writer's documents are random: none is near a query.
            got = store.query_many(queries[part::2])
            ours = alone.query % 2 == part
            assert sorted(zip((got.query * 2 + part).tolist(), got.id.tolist())) == sorted(
                zip(alone.query[ours].tolist(), alone.id[ours].tolist())
            )
            for j in range(part, 200, 2):
                assert [m for m in store.query(int(queries[j])) if not m[0].startswith("w")] == singles[j]
        return True

    def second_writer():
        j = 0
        while not stop.is_set():
            store.insert([f"x{j}"], [int(rng.integers(0, 2**63))], compact=False)
            j += 1
        return j

    writers = [threading.Thread(target=writer)]
    with ThreadPoolExecutor(1) as other:
        second = other.submit(second_writer)
        writers[0].start()
        try:
            with ThreadPoolExecutor(2) as pool:
                assert all(pool.map(reader, [0, 1]))
        finally:
            stop.set()
            writers[0].join()
        written = second.result()  # the two writers took turns: neither got StoreLockedError
    assert inserted and written
    assert store.get(f"w{inserted[-1]}") is not None and store.get(f"x{written - 1}") is not None
    # Closing while another thread queries: the query finishes or raises "closed", nothing else.
    errors = []

    def query_until_closed():
        try:
            while True:
                store.query_many(queries)
        except ValueError as e:
            errors.append(str(e))

    t = threading.Thread(target=query_until_closed)
    t.start()
    time.sleep(0.2)
    store.close()
    t.join(timeout=30)
    assert not t.is_alive() and errors and "closed" in errors[0]


def test_verified_audit_equals_the_cli_and_exact_jaccard(tmp_path, cli):
    """audit(verify_text=...) is the library's verified audit, as `audit --verify-text`: the
    same pairs with the same Jaccard, on a skewed corpus (60 copies of one page)."""
    rng = np.random.default_rng(5)
    words = [f"w{i}" for i in range(40)]
    pages = [" ".join(rng.choice(words, 80)) for _ in range(30)]
    docs = [(f"page-{i:02}", t) for i, t in enumerate(pages)]
    for i in range(10):
        tokens = pages[i].split()
        tokens[40 + i] = "changed"
        docs.append((f"near-{i:02}", " ".join(tokens)))
    docs += [(f"copy-{i:02}", pages[0]) for i in range(60)]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in docs))
    path = tmp_path / "s"
    with Store.create(path, distance=8, expected_size=10**4) as store:
        store.insert_documents(docs)
        verified = list(store.audit(verify_text=corpus, min_jaccard=0.5))
        lines = run_cli(cli, "audit", str(path), "--verify-text", str(corpus), "--min-jaccard", "0.5")
        assert [f"{a}\t{b}\t{d}\t{j:.6f}" for a, b, d, j in verified] == lines.splitlines()
        assert sum(1 for a, b, _, _ in verified if a.startswith("copy") and b.startswith("copy")) == 60 * 59 // 2

        def shingles(text):
            t = text.split()
            return {" ".join(t[i : i + 3]) for i in range(len(t) - 2)}

        texts = dict(docs)
        for a, b, _, j in verified:
            sa, sb = shingles(texts[a]), shingles(texts[b])
            assert j == pytest.approx(len(sa & sb) / len(sa | sb))
            assert j >= 0.5
        plain = {(a, b) for a, b, _ in store.audit()}
        assert {(a, b) for a, b, _, _ in verified} <= plain
        arrays = store.audit(verify_text=corpus, min_jaccard=0.5).to_numpy()
        assert list(arrays["jaccard"]) == [j for _, _, _, j in verified]
        clusters = list(store.audit(clusters=True, verify_text=corpus, min_jaccard=0.5))
        assert clusters == components([(a, b) for a, b, _, _ in verified])
        with pytest.raises(ValueError, match="1.5 is not between 0 and 1"):
            store.audit(verify_text=corpus, min_jaccard=1.5)
        with pytest.raises(TypeError):
            store.audit(verify_text=corpus, min_jaccard="high")
        with pytest.raises(Exception, match="nowhere"):
            store.audit(verify_text=tmp_path / "nowhere.jsonl")


def test_insert_file_reads_the_parquet_the_cli_exports(cli, tmp_path):
    """Parquet in Python is the CLI's: an export (int64 fingerprints, top bit set included)
    inserted into a new store gives back every document with its 64 bits."""
    from conftest import run_cli

    source = tmp_path / "source"
    model = {f"d{i}": (i * 0x9E3779B97F4A7C15) % 2**64 for i in range(500)}
    model.update({f"copy{i}": 2**63 + 5 for i in range(300)})  # skewed: 300 copies
    with Store.create(source, expected_size=1000) as store:
        store.insert(list(model), list(model.values()))
    exported = tmp_path / "all.parquet"
    run_cli(cli, "export", str(source), "--output", str(exported))
    with Store.create(tmp_path / "copy", expected_size=1000) as store:
        summary = store.insert_file(exported)
        assert summary["inserted"] == len(model)
        assert {i: store.get(i) for i in model} == model
        assert sorted(store.query(2**63 + 5, 0)) == sorted((f"copy{i}", 2**63 + 5, 0) for i in range(300))


def test_a_temporary_store_is_gone_when_closed(tmp_path):
    with Store.temporary(expected_size=1000) as store:
        path = store.path
        store.insert([f"copy{i}" for i in range(2000)], [7] * 2000)  # one page, 2000 copies
        assert len(store.query(7, 0)) == 2000 and os.path.isdir(path)
    assert not os.path.exists(os.path.dirname(path))
    # Also when the block fails, and the settings are create()'s (bad ones leave nothing).
    with pytest.raises(RuntimeError):
        with Store.temporary(distance=2, scheme="chars") as store:
            path = store.path
            assert store.distance == 2 and store.scheme == "chars-5-minhash"
            raise RuntimeError("a failing example")
    assert not os.path.exists(os.path.dirname(path))
    with pytest.raises(ValueError):
        Store.temporary(distance=300)


def test_duplicates_and_report_equal_the_cli(tmp_path, cli):
    """Store.duplicates() is `audit --duplicates` (earliest batch kept, then smallest id) and
    audit_report() draws `audit --report`'s picture and returns its summary, on a skewed store:
    300 copies of one page over two batches, near copies, random pages."""
    rng = np.random.default_rng(9)
    hot = 0x0123456789ABCDEF
    path = tmp_path / "s"
    with Store.create(path) as store:
        for day in range(2):
            ids = [f"copy-{i * 2 + (1 - day):03}" for i in range(150)]
            near = [f"near-{day}-{i}" for i in range(10)]
            rand = [f"rand-{day}-{i}" for i in range(100)]
            fps = [hot] * 150 + [hot ^ (1 << int(b)) for b in rng.integers(0, 64, 10)]
            fps += [int(x) for x in rng.integers(0, 2**63, 100, dtype=np.int64)]
            store.insert(ids + near + rand, np.array(fps, dtype=np.uint64))
        dups = store.duplicates()
        lines = run_cli(cli, "audit", str(path), "--duplicates", "-").splitlines()
        assert [f"{d}\t{k}" for d, k in dups] == ["\t".join(l.split("\t")[:2]) for l in lines]
        # The hot page keeps its day-0 copy with the smallest id: copy-001.
        assert ("copy-000", "copy-001") in dups
        assert all(k == "copy-001" for d, k in dups if d.startswith("copy"))
        summary = store.audit_report(tmp_path / "r.svg")
        cli_summary = json.loads(
            run_cli(cli, "audit", str(path), "--keep", str(tmp_path / "k.txt"), "--json")
        )["summary"]
        assert summary == cli_summary
        assert summary["duplicates"] == len(dups)
        assert (tmp_path / "r.svg").read_text().startswith("<svg")
        with pytest.raises(ValueError, match="SVG or PNG"):
            store.audit_report(tmp_path / "r.gif")


def test_duplicates_follow_the_keep_rule_and_equal_the_replay(tmp_path):
    """duplicates() is dedup's greedy (earliest batch, then smallest id; a document is dropped
    for the nearest kept one before it, then the smallest id), never components: on a chain of
    near copies, 500 copies of one page and random pages over two batches it equals a
    brute-force model, and Store.dedup of the documents replayed in that order into an empty
    store."""
    rng = np.random.default_rng(21)
    docs = []  # (id, fingerprint, batch)
    fp = 0x1234_5678_9ABC_DEF0
    for i in range(300):
        docs.append((f"chain-{i:03}", fp, int(rng.integers(0, 2))))
        a, b = rng.choice(64, 2, replace=False)
        fp ^= (1 << int(a)) | (1 << int(b))
    docs += [(f"copy-{i:03}", 0x0F0F_0F0F_0F0F_0F0F, int(rng.integers(0, 2))) for i in range(500)]
    docs += [(f"rand-{i:03}", int(x), int(rng.integers(0, 2)))
             for i, x in enumerate(rng.integers(0, 2**63, 200, dtype=np.int64))]
    order = sorted(docs, key=lambda d: (d[2], d[0]))
    kept, expected = [], []
    for id, fp, _ in order:
        near = [(bin(fp ^ k_fp).count("1"), k_id) for k_id, k_fp in kept
                if bin(fp ^ k_fp).count("1") <= 3]
        if near:
            expected.append((id, min(near)[1]))
        else:
            kept.append((id, fp))
    assert sum(1 for id, _ in kept if id.startswith("chain")) > 1, "the chain keeps several"
    with Store.create(tmp_path / "s") as store:
        for batch in (0, 1):
            part = [d for d in docs if d[2] == batch]
            store.insert([d[0] for d in part], np.array([d[1] for d in part], dtype=np.uint64))
        assert store.duplicates() == expected
    with Store.create(tmp_path / "replay") as replay:
        got = replay.dedup([d[0] for d in order], np.array([d[1] for d in order], dtype=np.uint64))
        dropped = ~got["kept"]
        assert list(zip(np.array(got["id"])[dropped], np.array(got["duplicate_of"])[dropped])) \
            == expected


def test_audit_pairs_are_lazy_at_skew(tmp_path, cli):
    """20,000 copies of one page are 199,990,000 pairs: len() counts them without expanding
    (held at once they would take ~20 GB), batches() pulls them a few at a time, and the pairs
    iterated are the CLI's, in its order."""
    hot = 0x0123456789ABCDEF
    with Store.create(tmp_path / "s") as store:
        ids = [f"copy-{i:05}" for i in range(20_000)]
        store.insert(ids, np.full(len(ids), hot, dtype=np.uint64))
        audit = store.audit()
        assert len(audit) == 20_000 * 19_999 // 2
        assert audit.summary()["duplicates"] == 19_999
        first = next(audit.batches(size=1000))
        assert len(first["a"]) == 1000 and first["distance"].dtype == np.int32
        assert (first["a"][0], first["b"][0]) == ("copy-00000", "copy-00001")
        assert store.duplicates()[:2] == [("copy-00001", "copy-00000"), ("copy-00002", "copy-00000")]
    with Store.create(tmp_path / "small") as store:
        ids = [f"c{i:03}" for i in range(300)] + ["near", "alone"]
        fps = [hot] * 300 + [hot ^ 0b101, 0xFEDCBA9876543210]
        store.insert(ids, np.array(fps, dtype=np.uint64))
        lines = run_cli(cli, "audit", str(tmp_path / "small")).splitlines()
        audit = store.audit()
        assert [f"{a}\t{b}\t{d}" for a, b, d in audit] == lines
        assert len(audit) == len(lines)
        # Batches of any size, and a second walk, give the same rows.
        rows = [r for batch in audit.batches(size=7) for r in zip(batch["a"], batch["b"])]
        assert [f"{a}\t{b}" for a, b in rows] == [l.rsplit("\t", 1)[0] for l in lines]
        assert len(audit.to_numpy()["a"]) == len(lines)
        assert list(store.clusters()) == list(store.audit(clusters=True))
        assert [len(c) for c in store.clusters()] == [301]
        with pytest.raises(ValueError, match="size"):
            next(audit.batches(size=0))
