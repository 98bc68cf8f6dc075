"""Dedup on ingest from Python: the same answers as a brute-force greedy model and the CLI,
skewed inputs and stores, files passed through, bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import numpy as np
import pytest

from simhashdb import Store

from conftest import random_documents, run_cli, tsv


def greedy(
    stored: List[Tuple[str, int, int]], ids: List[str], fps: List[int], distance: int
) -> List[Tuple[str, bool, Optional[str], int, int]]:
    """(id, kept, duplicate_of, distance, batch) by brute force: the nearest stored document
    or earlier kept input document within `distance` (ties: stored, earliest batch, smallest
    id); batch is the stored match's, -1 for none."""
    kept: List[Tuple[str, int]] = []
    out = []
    for id, fp in zip(ids, fps):
        best = None
        for sid, sfp, batch in stored:
            d = bin(sfp ^ fp).count("1")
            if d <= distance and (best is None or (d, 0, batch, sid) < best):
                best = (d, 0, batch, sid)
        for kid, kfp in kept:
            d = bin(kfp ^ fp).count("1")
            if d <= distance and (best is None or (d, 1, 0, kid) < best):
                best = (d, 1, 0, kid)
        if best is None:
            kept.append((id, fp))
            out.append((id, True, None, -1, -1))
        else:
            out.append((id, False, best[3], best[0], best[2] if best[1] == 0 else -1))
    return out


def stored_documents(cli: Path, path: Path) -> List[Tuple[str, int, int]]:
    lines = run_cli(cli, "export", str(path)).splitlines()
    return [(i, int(f, 16), int(b)) for i, f, b in (l.split("\t") for l in lines)]


def skewed_store(tmp_path: Path, cli: Path) -> Tuple[Path, List[str], List[int]]:
    """1,500 stored copies of one page over 3 batches plus random documents; an input of
    2,000 with 800 more copies, near copies and repeats."""
    rng = np.random.default_rng(7)
    path = tmp_path / "s"
    run_cli(cli, "init", str(path))
    page = 0x0123456789ABCDEF
    for b in range(3):
        ids, fps = random_documents(rng, 300, prefix=f"b{b}-")
        ids += [f"copy{b}-{i:04}" for i in range(500)]
        fps = list(fps) + [page] * 500
        label = ["--label", "crawl 1"] if b == 0 else []
        run_cli(cli, "insert", str(path), *label, input=tsv(ids, fps))
    ids, fps = random_documents(rng, 1200, prefix="in")
    fps = [int(f) for f in fps]
    ids += [f"x{i:04}" for i in range(800)]
    fps += [page ^ (1 << (i % 64)) if i % 4 == 0 else page for i in range(800)]
    order = rng.permutation(len(ids))
    return path, [ids[i] for i in order], [fps[i] for i in order]


def test_dedup_equals_the_model_and_the_cli(tmp_path, cli):
    path, ids, fps = skewed_store(tmp_path, cli)
    stored = stored_documents(cli, path)
    expected = greedy(stored, ids, fps, 3)
    with Store.open(path) as store:
        got = store.dedup(ids, np.array(fps, dtype=np.uint64))
    assert got["id"] == ids
    assert list(
        zip(
            got["id"],
            got["kept"].tolist(),
            got["duplicate_of"],
            got["distance"].tolist(),
            got["duplicate_batch"].tolist(),
        )
    ) == expected
    # Provenance: the stored match's batch as `batches` lists it.
    with Store.open(path) as store:
        batches = {b["batch"]: b for b in store.batches()}
    provenance = [(batches[b]["label"], batches[b]["committed_utc"]) if b > 0 else (None, None) for *_, b in expected]
    assert list(zip(got["duplicate_label"], got["duplicate_committed_utc"])) == provenance
    assert "crawl 1" in got["duplicate_label"] and None in got["duplicate_label"]
    assert got["inserted"] == 0 and got["batch"] is None
    kept = sum(1 for e in expected if e[1])
    assert got["summary"]["kept"] == kept
    assert got["stored"].sum() == got["summary"]["duplicates_of_stored"]

    # The CLI: the same duplicates, and dedup_file writes what the CLI writes.
    input = tmp_path / "in.tsv"
    input.write_text(tsv(ids, fps))
    cli_dups = run_cli(cli, "dedup", str(path), str(input), "--duplicates", "-", "--output", str(tmp_path / "cli.tsv"))
    def columns(batch: int) -> str:
        if batch < 0:
            return "\t\t"
        return f"{batch}\t{batches[batch]['label'] or ''}\t{batches[batch]['committed_utc']}"

    model_dups = "".join(f"{i}\t{of}\t{d}\t{columns(b)}\n" for i, k, of, d, b in expected if not k)
    assert cli_dups == model_dups
    with Store.open(path) as store:
        summary = store.dedup_file(input, tmp_path / "py.tsv", tmp_path / "py-dups.tsv")
    assert (tmp_path / "py.tsv").read_bytes() == (tmp_path / "cli.tsv").read_bytes()
    assert (tmp_path / "py-dups.tsv").read_text() == model_dups
    assert summary["kept"] == kept and summary["batch"] is None

    # Inserting: the kept documents are stored, and a second dedup drops everything.
    with Store.open(path) as store:
        got = store.dedup(ids, fps, insert=True, label="day-2")
        assert got["inserted"] == kept and got["batch"] == 4
        again = store.dedup(ids, fps)
        assert not again["kept"].any() and again["stored"].all()
    after = {i: f for i, f, _ in stored_documents(cli, path)}
    model = {i: f for i, f, _ in stored}
    model.update({i: f for (i, k, *_), f in zip(expected, fps) if k})
    assert after == model


def test_texts_and_files_with_insert(tmp_path, cli):
    path = tmp_path / "s"
    run_cli(cli, "init", str(path))
    page = "the quick brown fox jumps over the lazy dog " * 5
    docs = [("a", page), ("b", page), ("c", "something else entirely, a page about cats " * 4)]
    with Store.open(path) as store:
        got = store.dedup([d[0] for d in docs], texts=[d[1] for d in docs])
        assert got["kept"].tolist() == [True, False, True]
        assert got["duplicate_of"] == [None, "a", None]
        jsonl = tmp_path / "in.jsonl"
        lines = [json.dumps({"id": i, "text": t, "lang": "en"}) + "\n" for i, t in docs]
        jsonl.write_text("".join(lines))
        summary = store.dedup_file(jsonl, tmp_path / "kept.jsonl", insert=True, label="crawl")
        assert summary["inserted"] == 2 and summary["batch"] == 1
        assert (tmp_path / "kept.jsonl").read_text() == lines[0] + lines[2]
        assert len(store) == 2


def test_bad_input(tmp_path, cli):
    path = tmp_path / "s"
    run_cli(cli, "init", str(path))
    bad = tmp_path / "bad.tsv"
    bad.write_text("a\t0x1\nb\tnope\n")
    with Store.open(path) as store:
        with pytest.raises(ValueError, match="bad.tsv:2"):
            store.dedup_file(bad, tmp_path / "out.tsv", tmp_path / "d.tsv", insert=True)
        assert not (tmp_path / "out.tsv").exists() and not (tmp_path / "d.tsv").exists()
        assert len(store) == 0
        summary = store.dedup_file(bad, tmp_path / "out.tsv", skip_invalid=True)
        assert summary["skipped"] == 1 and summary["kept"] == 1
        with pytest.raises(ValueError, match="distance"):
            store.dedup(["a"], [1], distance=4)
        with pytest.raises(ValueError, match="exactly one"):
            store.dedup(["a"])
        with pytest.raises(ValueError, match="insert=True"):
            store.dedup(["a"], [1], label="x")
        with pytest.raises(ValueError, match="ids"):
            store.dedup(["a", "b"], [1])
        with pytest.raises(FileNotFoundError, match="missing.tsv"):
            store.dedup_file(tmp_path / "missing.tsv", tmp_path / "o.tsv")


def test_parquet_duplicates_are_an_ids_to_remove_list(tmp_path, cli):
    """NeMo Curator's removal workflow drops the rows whose id is in the `id` column of the
    ids-to-remove Parquet: with `dedup --duplicates X.parquet` and `audit --duplicates
    X.parquet` that leaves exactly the documents each keeps."""
    pq = pytest.importorskip("pyarrow.parquet")
    path, ids, fps = skewed_store(tmp_path, cli)
    input = tmp_path / "in.tsv"
    input.write_text(tsv(ids, fps))
    dups, kept = tmp_path / "ids_to_remove.parquet", tmp_path / "kept.tsv"
    run_cli(cli, "dedup", str(path), str(input), "--output", str(kept), "--duplicates", str(dups))
    remove = set(pq.read_table(dups, columns=["id"])["id"].to_pylist())
    assert [i for i in ids if i not in remove] == [l.split("\t")[0] for l in kept.read_text().splitlines()]

    audit = tmp_path / "audit_ids_to_remove.parquet"
    run_cli(cli, "audit", str(path), "--duplicates", str(audit), "--keep", str(tmp_path / "keep.txt"), "--singletons")
    remove = set(pq.read_table(audit, columns=["id"])["id"].to_pylist())
    stored = [i for i, _, _ in stored_documents(cli, path)]
    assert sorted(i for i in stored if i not in remove) == sorted((tmp_path / "keep.txt").read_text().split())
