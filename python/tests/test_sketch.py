"""Verification sketches from Python: a store made with sketch=True answers audit, query_texts
and dedup with min_jaccard exactly as the CLI does on the same store, including a skewed one
(2,000 copies of one page), flags what it cannot verify, and refuses stores without sketches."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Tuple

import numpy as np
import pytest

from simhashdb import Store

from conftest import json_lines, run_cli

WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
         "juliet", "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo"]


def text(base: int, edits: int) -> str:
    words = [WORDS[(base * 7 + i * i * 3 + i) % len(WORDS)] for i in range(40)]
    for e in range(edits):
        words[(e * 13 + base) % 40] = WORDS[(e * 5 + 11) % len(WORDS)]
    return " ".join(words)


def documents() -> List[Tuple[str, str]]:
    """2,000 copies of one page, near versions of it and of four others."""
    docs = [(f"copy-{i:04}", text(0, 0)) for i in range(2000)]
    docs += [(f"near-{b}-{e}", text(b, e)) for b in range(5) for e in range(1, 9)]
    return docs


def audit_as_the_cli_does(store: Store, path: Path, cli: Path) -> int:
    """Checks that the store's audit with min_jaccard 0.8 lists the CLI's pairs, estimates and
    unverified flags; returns the unverified pairs."""
    audit = store.audit(min_jaccard=0.8)
    pairs = sorted(audit)
    summary = audit.summary()
    cli_pairs = sorted(
        tuple(l.split("\t")) for l in run_cli(cli, "audit", str(path), "--min-jaccard", "0.8").splitlines()
    )
    assert len(pairs) == len(cli_pairs) > 2000 * 1999 // 2
    for (a, b, d, j), (ca, cb, cd, cj) in zip(pairs, cli_pairs):
        assert (a, b, str(d)) == (ca, cb, cd)
        assert cj == ("unverified" if j is None else f"{j:.6f}")
    assert summary["unverified_pairs"] == sum(1 for p in pairs if p[3] is None)
    return summary["unverified_pairs"]


def test_python_answers_as_the_cli_does(tmp_path: Path, cli: Path) -> None:
    path = tmp_path / "s"
    docs = documents()
    with Store.create(path, distance=3, expected_size=10**4, sketch=True, sketch_bytes=256) as store:
        store.insert_documents(docs[:1500])
        store.insert_documents(docs[1500:])
        assert store.stats()["sketch_bytes"] == 256
        # Texts only: ids and sketches are read in one pass over two runs.
        assert audit_as_the_cli_does(store, path, cli) == 0
        store.insert(["bare"], [store.get("copy-0000")])  # no sketch: its pairs are unverified
        assert audit_as_the_cli_does(store, path, cli) > 0

    with Store.open(path) as store:
        queries = [text(0, 0), text(3, 4)]
        got = store.query_texts(queries, min_jaccard=0.9)
        for q, matches in zip(queries, got):
            lines = run_cli(cli, "query", str(path), "--text", q, "--min-jaccard", "0.9", "--json")
            want = [(m["id"], int(m["fingerprint"], 16), m["distance"], m.get("jaccard"))
                    for m in json_lines(lines)]
            assert [tuple(m) for m in matches] == want
        assert any(m[3] is None for m in got[0]), "the bare copy is unverified"

        new = [("x-copy", text(0, 0)), ("x-other", text(4, 0)), ("x-near", text(2, 6))]
        answer = store.dedup([i for i, _ in new], texts=[t for _, t in new], min_jaccard=0.8)
        jsonl = "".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in new)
        lines = run_cli(cli, "dedup", str(path), "--format", "jsonl", "--min-jaccard", "0.8",
                        "--duplicates", "-", "--output", str(tmp_path / "kept.jsonl"), input=jsonl)
        dropped = {l.split("\t")[0]: l.split("\t") for l in lines.splitlines()}
        for k, (i, _) in enumerate(new):
            assert bool(answer["kept"][k]) == (i not in dropped)
            if i in dropped:
                assert answer["duplicate_of"][k] == dropped[i][1]
                assert f"{answer['jaccard'][k]:.6f}" == dropped[i][3]
        assert answer["summary"]["unverified"] == 0


def test_stores_without_sketches_refuse_min_jaccard(tmp_path: Path) -> None:
    with Store.create(tmp_path / "plain") as store:
        store.insert_documents([("a", text(0, 0))])
        for call in (
            lambda: store.audit(min_jaccard=0.8),
            lambda: store.query_texts([text(0, 0)], min_jaccard=0.8),
            lambda: store.dedup(["b"], texts=[text(0, 0)], min_jaccard=0.8),
        ):
            with pytest.raises(ValueError, match="keeps no sketches"):
                call()
    with pytest.raises(ValueError, match="sketch_bytes"):
        Store.create(tmp_path / "bad", sketch=True, sketch_bytes=32)
    with pytest.raises(ValueError, match="sketch=True"):
        Store.create(tmp_path / "bad2", sketch_bytes=128)
    with Store.create(tmp_path / "sk", sketch=True) as store:
        with pytest.raises(ValueError, match="between 0 and 1"):
            store.audit(min_jaccard=1.5)
        assert np.isnan(store.dedup(["a"], texts=[text(0, 0)], min_jaccard=0.5)["jaccard"][0])
